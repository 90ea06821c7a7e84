import Foundation
public import Logging

/// A swift-log handler that writes logfmt lines, the service's text format:
///
///     time=2026-11-25T05:20:01.123Z level=info msg=request label=innerpeace bytes=71483 method=GET status=200 user_agent="x status=500"
///
/// `time`, `level`, `msg` and `label` come first, then the metadata with its keys sorted. A value
/// is written bare when it is a plain token, and quoted otherwise: when it is empty, or holds a
/// space, `=`, `"`, `\` or any control or non-ASCII character; inside quotes `"` and `\` are
/// escaped with a backslash and control characters as `\n`, `\r`, `\t` or `\u00XX`. So no value,
/// a header's included, can end its field early or forge another. Keys are written with every
/// character outside `[A-Za-z0-9_.-]` replaced by `_`. Dictionaries and arrays are written as
/// their swift-log text, quoted.
public struct LogfmtLogHandler: LogHandler {
  public var logLevel: Logger.Level
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String
  private let write: @Sendable (String) -> Void

  /// - Parameter write: where a finished line goes (stderr through ``LogOutput`` by default).
  public init(
    label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil,
    write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError
  ) {
    self.label = label
    logLevel = level
    self.metadataProvider = metadataProvider
    self.write = write
  }

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
    var fields = [
      ("time", JSONLogHandler.timestamp(time)), ("level", level.rawValue), ("msg", message), ("label", label),
    ]
    for key in metadata.keys.sorted() where !fixedKeys.contains(key) {
      fields.append((self.key(key), "\(metadata[key]!)"))
    }
    return fields.map { "\($0)=\(value($1))" }.joined(separator: " ") + "\n"
  }

  /// The fields every line has, which metadata cannot replace.
  private static let fixedKeys: Set<String> = ["time", "level", "msg", "label"]

  /// A key as a bare logfmt token.
  static func key(_ key: String) -> String {
    let token = String(String.UnicodeScalarView(key.unicodeScalars.map { isKeyCharacter($0) ? $0 : "_" }))
    return token.isEmpty ? "_" : token
  }

  private static func isKeyCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-": true
    default: false
    }
  }

  /// A value, bare when it is a plain token, else quoted and escaped.
  static func value(_ value: String) -> String {
    let bare =
      !value.isEmpty
      && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != "=" && $0 != "\"" && $0 != "\\" }
    if bare { return value }
    var quoted = "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": quoted += "\\\""
      case "\\": quoted += "\\\\"
      case "\n": quoted += "\\n"
      case "\r": quoted += "\\r"
      case "\t": quoted += "\\t"
      case "\u{0}"..."\u{1F}", "\u{7F}"..."\u{9F}", "\u{2028}", "\u{2029}":
        let hex = String(scalar.value, radix: 16)
        quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: quoted.unicodeScalars.append(scalar)
      }
    }
    return quoted + "\""
  }
}
