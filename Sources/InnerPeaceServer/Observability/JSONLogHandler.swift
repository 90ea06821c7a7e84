import Foundation
public import Logging

/// How the service writes its log lines on stderr.
public enum LogFormat: String, CaseIterable, Sendable {
  /// swift-log's own text lines.
  case text
  /// One JSON object per line: `time` (RFC 3339, UTC, milliseconds), `level`, `message`, `label`,
  /// and the metadata (for a request: method, path, query, status, bytes, ms, client,
  /// user_agent, route).
  case json
}

/// A swift-log handler that writes one JSON object per line to stderr.
public struct JSONLogHandler: LogHandler {
  public var logLevel: Logger.Level
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String
  private let write: @Sendable (String) -> Void

  /// - Parameter write: where a finished line goes (stderr by default; tests capture it).
  public init(
    label: String, level: Logger.Level,
    write: @escaping @Sendable (String) -> Void = JSONLogHandler.writeToStandardError
  ) {
    self.label = label
    logLevel = level
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
    var fields: [String: String] = [:]
    var merged = metadata
    if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
    if let extra = event.metadata { merged.merge(extra) { $1 } }
    for (key, value) in merged { fields[key] = "\(value)" }
    fields["time"] = Self.timestamp(Date())
    fields["level"] = event.level.rawValue
    fields["message"] = "\(event.message)"
    fields["label"] = label
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(fields) else { return }
    write(String(decoding: data, as: UTF8.self) + "\n")
  }

  /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-25T05:20:01.123Z`.
  static func timestamp(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
  }
}
