import Foundation

/// Where a catalog file's JSON goes wrong, as a 1-based line and column (counted in Unicode
/// scalars), for ``InnerPeaceError/catalogMalformed(file:line:column:reason:)``.
///
/// Foundation's `JSONSerialization` finds syntax errors; it gives their byte offset, in
/// `userInfo` on Darwin and only in its message ("… around character 18.") on Linux, which is
/// turned into a line and column here. `JSONDecoder` on Linux reports no position at all.
enum JSONPosition {
  /// A problem at a byte offset.
  struct Problem: Error, Equatable {
    var offset: Int
    var reason: String
  }

  /// The first syntax error in `data`, or `nil` for valid JSON (a top-level fragment allowed).
  static func syntaxError(in data: Data) -> Problem? {
    do {
      _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
      return nil
    } catch {
      return problem(from: error as NSError, dataCount: data.count)
    }
  }

  /// The offset and reason in one of `JSONSerialization`'s errors. An error without an offset
  /// (such as the end of the file) is placed at the end of the data.
  static func problem(from error: NSError, dataCount: Int) -> Problem {
    var message = error.userInfo[NSDebugDescriptionErrorKey] as? String ?? "invalid JSON"
    var offset = error.userInfo["NSJSONSerializationErrorIndex"] as? Int
    // "Invalid value around character 18.", "Invalid hex encoded sequence in "ZZZZ" at 15.",
    // "Invalid UTF-8 sequence 2 bytes starting from character 11."
    if let match = message.firstMatch(of: #/(?:character|at) ([0-9]+)\.?$/#) { offset = offset ?? Int(match.1) }
    message = message.replacing(#/(?: around character [0-9]+| at [0-9]+)?\.?$/#, with: "")
    var reason = message.prefix(1).lowercased() + message.dropFirst()
    if reason.contains("control character") { reason += " (a raw line break? use \\n)" }
    return Problem(offset: min(max(offset ?? dataCount, 0), dataCount), reason: reason)
  }

  /// `data` in UTF-8, so that every check reads one encoding (a key spelt with an escape in a
  /// UTF-16 file is found to be the same key, and positions count the same scalars): JSON text in
  /// UTF-16 or UTF-32, told apart by a byte order mark or by where its first four bytes hold zeros
  /// (RFC 4627 §3; JSON's first two characters are ASCII), is transcoded; anything else is returned
  /// as it is. `nil` for UTF-16 or UTF-32 that does not decode.
  static func utf8(_ data: Data) -> Data? {
    let head = Array(data.prefix(4)).map(Optional.some) + [UInt8?](repeating: nil, count: max(0, 4 - data.count))
    let encoding: String.Encoding
    switch (head[0], head[1], head[2], head[3]) {
    case (0x00, 0x00, 0xFE, 0xFF), (0xFF, 0xFE, 0x00, 0x00): encoding = .utf32
    case (0xFE, 0xFF, _, _), (0xFF, 0xFE, _, _): encoding = .utf16
    case (0x00, 0x00, 0x00, .some): encoding = .utf32BigEndian
    case (.some, 0x00, 0x00, 0x00): encoding = .utf32LittleEndian
    case (0x00, .some, _, _): encoding = .utf16BigEndian
    case (.some, 0x00, _, _): encoding = .utf16LittleEndian
    default: return data
    }
    return String(data: data, encoding: encoding).map { Data($0.utf8) }
  }

  /// How many values the array that `bytes` holds has, counted by a scan that follows only
  /// strings and nesting (no parse, no allocation), or `nil` when the text is not an array. On
  /// text that is not valid JSON the count means nothing, and the parse that follows refuses it.
  static func topLevelArrayCount(in bytes: [UInt8]) -> Int? {
    var depth = 0
    var count = 0
    var index = 0
    var sawArray = false
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        if depth == 1 && count == 0 { count = 1 }
        index += 1
        while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
          index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
        }
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        if depth == 0 {
          guard byte == UInt8(ascii: "["), !sawArray else { return nil }
          sawArray = true
        } else if depth == 1 && count == 0 {
          count = 1
        }
        depth += 1
      case UInt8(ascii: "]"), UInt8(ascii: "}"):
        depth -= 1
      case UInt8(ascii: ","):
        if depth == 1 { count += 1 }
      case 0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF:
        break
      default:
        guard depth > 0 else { return nil }
        if depth == 1 && count == 0 { count = 1 }
      }
      index += 1
    }
    return sawArray ? count : nil
  }

  /// The first key that occurs twice in one object of `bytes`, which is valid JSON (other bytes
  /// give no trap, only a meaningless answer). RFC 8259 leaves a duplicate's meaning open, and
  /// Foundation silently keeps one of the two values.
  static func firstDuplicateKey(in bytes: [UInt8]) -> Problem? {
    // The keys of each open object, innermost last; `nil` for an open array.
    var open: [Set<String>?] = []
    var expectingKey = false
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "{"):
        open.append([])
        expectingKey = true
      case UInt8(ascii: "["):
        open.append(nil)
        expectingKey = false
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        _ = open.popLast()
        expectingKey = false
      case UInt8(ascii: ","):
        expectingKey = open.last.map { $0 != nil } ?? false
      case UInt8(ascii: "\""):
        let start = index
        index += 1
        while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
          index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard index < bytes.count else { return nil }
        if expectingKey, !open.isEmpty {
          expectingKey = false
          let key = string(literal: bytes[start...index])
          if open[open.count - 1]?.insert(key).inserted == false {
            return Problem(offset: start, reason: "duplicate key \"\(key)\" in object")
          }
        }
      default:
        break
      }
      index += 1
    }
    return nil
  }

  /// The value of a valid JSON string literal (quotes included), escapes resolved, so that
  /// `"text"` and `"te\u0078t"` are the same key.
  private static func string(literal: ArraySlice<UInt8>) -> String {
    guard literal.contains(UInt8(ascii: "\\")) else {
      return String(decoding: literal.dropFirst().dropLast(), as: UTF8.self)
    }
    return (try? JSONDecoder().decode(String.self, from: Data(literal))) ?? String(decoding: literal, as: UTF8.self)
  }

  /// The 1-based line and column of a byte offset: lines end at line feeds, and a column is a
  /// Unicode scalar (a UTF-8 continuation byte does not start one).
  static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
    let before = bytes.prefix(offset)
    let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
    let line = before.count { $0 == 0x0A } + 1
    let column = before[lineStart...].count { $0 & 0xC0 != 0x80 } + 1
    return (line, column)
  }
}
