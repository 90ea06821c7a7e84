import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import InnerPeaceServer

/// The two log formats, line by line: JSON with typed values, and logfmt that no value can forge
/// a field in.
@Suite struct LogFormatTests {
  static let time = Date(timeIntervalSince1970: 1_795_000_000.25)

  /// Hostile strings a header can carry into a log line.
  static let hostile = [
    "x status=500 route=/admin", "", " ", "a\"b", "back\\slash", "line\nstatus=500", "cr\r\nX-Forged: 1",
    "tab\there", "nul\u{0}byte", "del\u{7F}", "\u{1F33F} leaf", "caf\u{E9}", "sep\u{2028}arator", "=", "\"",
    "key=value\"", String(repeating: "z", count: 10_000),
  ]

  static func capture(_ make: (@escaping @Sendable (String) -> Void) -> any LogHandler) -> (
    Logger, NIOLockedValueBox<[String]>
  ) {
    let lines = NIOLockedValueBox<[String]>([])
    let handler = make { line in lines.withLockedValue { $0.append(line) } }
    return (Logger(label: "innerpeace") { _ in handler }, lines)
  }

  // MARK: JSON

  @Test func jsonNumbersAndBooleansAreTyped() throws {
    let line = JSONLogHandler.line(
      time: Self.time, level: .info, message: "request", label: "innerpeace",
      metadata: [
        "status": .stringConvertible(200), "ms": .stringConvertible(114.8), "bytes": .stringConvertible(71_483),
        "port": .stringConvertible(UInt16(8080)), "complete": .stringConvertible(false),
        "path": "/cards/1.png", "kept": "200", "infinite": .stringConvertible(Double.infinity),
        "nested": .dictionary(["count": .stringConvertible(2), "list": .array(["a", .stringConvertible(true)])]),
      ])
    #expect(line.hasSuffix("}\n") && !line.dropLast().contains("\n"))
    #expect(line.contains(#""status":200}"#) && line.contains(#""ms":114.8,"#), "\(line)")
    #expect(line.contains(#""complete":false,"#) && line.contains(#""kept":"200","#), "\(line)")
    #expect(line.hasPrefix(#"{"time":"2026-11-18T"#), "\(line)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect((object["status"] as? NSNumber)?.intValue == 200)
    #expect(object["status"] is NSNumber && !(object["status"] is String))
    #expect((object["ms"] as? NSNumber)?.doubleValue == 114.8)
    #expect((object["bytes"] as? NSNumber)?.intValue == 71_483)
    #expect((object["port"] as? NSNumber)?.intValue == 8080)
    #expect((object["complete"] as? Bool) == false)
    #expect(object["kept"] as? String == "200", "a .string value stays a string")
    #expect(object["infinite"] as? String == "inf", "JSON has no infinity: a string")
    #expect(object["path"] as? String == "/cards/1.png")
    let nested = try #require(object["nested"] as? [String: Any])
    #expect((nested["count"] as? NSNumber)?.intValue == 2)
    #expect((nested["list"] as? [Any])?.count == 2)
    #expect(object["time"] as? String == "2026-11-18T11:06:40.250Z")
    #expect(object["level"] as? String == "info" && object["message"] as? String == "request")
    #expect(object["label"] as? String == "innerpeace")
  }

  /// Any string survives the trip through a JSON line, and the line stays one line.
  @Test(arguments: hostile) func jsonStringsSurviveWhole(value: String) throws {
    let (logger, lines) = Self.capture { JSONLogHandler(label: "innerpeace", level: .info, write: $0) }
    logger.info("message \(value)", metadata: ["user_agent": .string(value), value: "as a key"])
    let line = try #require(lines.withLockedValue { $0 }.first)
    #expect(line.hasSuffix("\n") && !line.dropLast().contains("\n") && !line.contains("\r"))
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["user_agent"] as? String == value)
    #expect(object["message"] as? String == "message \(value)")
  }

  /// Metadata cannot replace the fixed fields.
  @Test func jsonFixedFieldsWin() throws {
    let line = JSONLogHandler.line(
      time: Self.time, level: .warning, message: "real", label: "innerpeace",
      metadata: ["level": "debug", "message": "forged", "time": "never", "label": "other"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["level"] as? String == "warning" && object["message"] as? String == "real")
    #expect(object["label"] as? String == "innerpeace" && object["time"] as? String != "never")
  }

  // MARK: logfmt

  /// A User-Agent full of `key=value` pairs stays one field, and every hostile value reads back
  /// as it was written.
  @Test(arguments: hostile) func logfmtValuesCannotForgeFields(value: String) throws {
    let (logger, lines) = Self.capture { LogfmtLogHandler(label: "innerpeace", level: .info, write: $0) }
    logger.info(
      "request",
      metadata: [
        "status": .stringConvertible(200), "route": "/cards/{quote}", "user_agent": .string(value),
        "path": .string(value),
      ])
    let line = try #require(lines.withLockedValue { $0 }.first)
    #expect(line.hasSuffix("\n") && !line.dropLast().contains("\n") && !line.contains("\r"))
    let fields = try #require(Self.parseLogfmt(String(line.dropLast())), "unparsable: \(line)")
    #expect(fields.map(\.key) == ["time", "level", "msg", "label", "path", "route", "status", "user_agent"])
    let values = Dictionary(fields.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    #expect(values["user_agent"] == value)
    #expect(values["path"] == value)
    #expect(values["status"] == "200" && values["route"] == "/cards/{quote}")
    #expect(values["level"] == "info" && values["msg"] == "request" && values["label"] == "innerpeace")
  }

  @Test func logfmtQuotesOnlyWhatNeedsIt() {
    let line = LogfmtLogHandler.line(
      time: Self.time, level: .info, message: "listening on http://127.0.0.1:8080", label: "innerpeace",
      metadata: ["port": .stringConvertible(8080), "ms": .stringConvertible(3.5), "empty": "", "odd key=": "v"])
    #expect(
      line
        == #"time=2026-11-18T11:06:40.250Z level=info msg="listening on http://127.0.0.1:8080" label=innerpeace empty="" ms=3.5 odd_key_=v port=8080"#
        + "\n")
    #expect(LogfmtLogHandler.value("a\"b\\c\nd\u{1}") == #""a\"b\\c\nd\u0001""#)
    #expect(LogfmtLogHandler.value("GET") == "GET")
  }

  /// A logfmt reader, as Go's `go-logfmt` and Python's `logfmt` read: `key=value` pairs
  /// separated by spaces, a value bare (up to the next space) or quoted with backslash escapes
  /// (`\"`, `\\`, `\n`, `\r`, `\t`, `\uXXXX`). Returns nil for a line it cannot read whole.
  static func parseLogfmt(_ line: String) -> [(key: String, value: String)]? {
    var fields: [(key: String, value: String)] = []
    var scalars = Substring(line).unicodeScalars[...]
    while !scalars.isEmpty {
      while scalars.first == " " { scalars.removeFirst() }
      if scalars.isEmpty { break }
      var key = ""
      while let next = scalars.first, next != "=", next != " ", next != "\"" {
        key.unicodeScalars.append(next)
        scalars.removeFirst()
      }
      guard !key.isEmpty, scalars.first == "=" else { return nil }
      scalars.removeFirst()
      var value = ""
      if scalars.first == "\"" {
        scalars.removeFirst()
        var closed = false
        while let next = scalars.popFirst() {
          if next == "\"" {
            closed = true
            break
          }
          guard next == "\\" else {
            value.unicodeScalars.append(next)
            continue
          }
          guard let escaped = scalars.popFirst() else { return nil }
          switch escaped {
          case "\"", "\\": value.unicodeScalars.append(escaped)
          case "n": value += "\n"
          case "r": value += "\r"
          case "t": value += "\t"
          case "u":
            let digits = String(String.UnicodeScalarView(scalars.prefix(4)))
            guard digits.count == 4, let code = UInt32(digits, radix: 16), let scalar = Unicode.Scalar(code) else {
              return nil
            }
            scalars.removeFirst(4)
            value.unicodeScalars.append(scalar)
          default: return nil
          }
        }
        guard closed, scalars.isEmpty || scalars.first == " " else { return nil }
      } else {
        while let next = scalars.first, next != " " {
          guard next != "\"", next != "=" else { return nil }
          value.unicodeScalars.append(next)
          scalars.removeFirst()
        }
      }
      fields.append((key, value))
    }
    return fields
  }
}
