import Foundation
public import Logging

/// How the service writes its log lines on stderr.
public enum LogFormat: String, CaseIterable, Sendable {
  /// logfmt lines (``LogfmtLogHandler``): `time=… level=info msg=request label=innerpeace status=200 …`,
  /// a value quoted when it holds a space, `=`, a quote or a control character, or is empty.
  case text
  /// One JSON object per line: `time` (RFC 3339, UTC, milliseconds), `level`, `message`, `label`,
  /// and the metadata (for a request: method, path, query, status, bytes, ms, client,
  /// user_agent, route, request_id, trace_id), numbers as numbers and booleans as booleans.
  case json
}

/// A swift-log handler that writes one JSON object per line to stderr.
///
/// Metadata given as `.stringConvertible` of an integer or a finite `Double`/`Float` is written as
/// a JSON number, of a `Bool` as `true`/`false`; `.string` values stay strings, dictionaries and
/// arrays become objects and arrays. The fields `time`, `level`, `message` and `label` come first
/// and cannot be overwritten by metadata; the metadata follows with its keys sorted.
public struct JSONLogHandler: LogHandler {
  public var logLevel: Logger.Level
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String
  private let write: @Sendable (String) -> Void

  /// - Parameter write: where a finished line goes (stderr by default; tests capture it).
  public init(
    label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil,
    write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError
  ) {
    self.label = label
    logLevel = level
    self.metadataProvider = metadataProvider
    self.write = write
  }

  /// Writes a line to stderr; a line that cannot be written is dropped and counted
  /// (``LogOutput``), never a trap.
  public static let writeToStandardError: @Sendable (String) -> Void = { line in LogOutput.write(line) }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var merged = metadata
    if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
    if let extra = event.metadata { merged.merge(extra) { $1 } }
    write(Self.line(time: Date(), level: event.level, message: "\(event.message)", label: label, metadata: merged))
  }

  /// The whole line, its line feed included.
  static func line(
    time: Date, level: Logger.Level, message: String, label: String, metadata: Logger.Metadata
  ) -> String {
    var line = "{\"time\":"
    appendString(timestamp(time), to: &line)
    line += ",\"level\":"
    appendString(level.rawValue, to: &line)
    line += ",\"message\":"
    appendString(message, to: &line)
    line += ",\"label\":"
    appendString(label, to: &line)
    for key in metadata.keys.sorted() where !fixedKeys.contains(key) {
      line += ","
      appendString(key, to: &line)
      line += ":"
      append(metadata[key]!, to: &line)
    }
    line += "}\n"
    return line
  }

  /// The fields every line has, which metadata cannot replace.
  private static let fixedKeys: Set<String> = ["time", "level", "message", "label"]

  /// A metadata value as JSON: a number or a boolean when it is one (see the type's comment).
  static func append(_ value: Logger.Metadata.Value, to line: inout String) {
    switch value {
    case .string(let string): appendString(string, to: &line)
    case .stringConvertible(let convertible):
      if let literal = jsonLiteral(convertible) {
        line += literal
      } else {
        appendString(convertible.description, to: &line)
      }
    case .array(let values):
      line += "["
      for (index, element) in values.enumerated() {
        if index > 0 { line += "," }
        append(element, to: &line)
      }
      line += "]"
    case .dictionary(let dictionary):
      line += "{"
      for (index, key) in dictionary.keys.sorted().enumerated() {
        if index > 0 { line += "," }
        appendString(key, to: &line)
        line += ":"
        append(dictionary[key]!, to: &line)
      }
      line += "}"
    }
  }

  /// The JSON number or boolean a value is, or `nil` for anything else (and for an infinite or
  /// NaN floating-point value, which JSON cannot hold).
  private static func jsonLiteral(_ value: any CustomStringConvertible & Sendable) -> String? {
    switch value {
    case let bool as Bool: return bool ? "true" : "false"
    case let integer as any BinaryInteger: return "\(integer)"
    case let double as Double: return double.isFinite ? "\(double)" : nil
    case let float as Float: return float.isFinite ? "\(float)" : nil
    default: return nil
    }
  }

  /// A JSON string: `"` and `\` escaped, control characters (and U+2028, U+2029, which some
  /// JavaScript readers take as line ends) as `\u` escapes; the rest as UTF-8.
  static func appendString(_ string: String, to line: inout String) {
    line += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": line += "\\\""
      case "\\": line += "\\\\"
      case "\n": line += "\\n"
      case "\r": line += "\\r"
      case "\t": line += "\\t"
      case "\u{0}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
        let hex = String(scalar.value, radix: 16)
        line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: line.unicodeScalars.append(scalar)
      }
    }
    line += "\""
  }

  /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-25T05:20:01.123Z`.
  static func timestamp(_ date: Date) -> String {
    date.formatted(timestampStyle)
  }

  private static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
}
