import Foundation
public import Logging
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the service's log lines go: stderr, by plain `write(2)` calls. A line that cannot be
/// written (a full disk, a closed stderr, a reader gone) is dropped and counted, never a trap or
/// a kill: the service goes on answering, and `innerpeace_log_lines_dropped_total` says how many
/// lines were lost. The count is the process's (stderr is the process's), read by every
/// ``ServerMetrics`` at each scrape.
public enum LogOutput {
  private static let dropped = Atomic(0)

  /// Lines dropped so far because they could not be written.
  public static var droppedLines: Int { dropped.load(ordering: .relaxed) }

  /// Writes one whole line (its line feed included) to `descriptor` (stderr by default).
  /// - Returns: whether it was written; a line that was not is counted in ``droppedLines``.
  @discardableResult
  public static func write(_ line: String, to descriptor: Int32 = 2) -> Bool {
    var bytes = Array(line.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeMutableBytes { raw in
        #if canImport(Glibc)
          Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
        #else
          Darwin.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
        #endif
      }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        dropped.add(1, ordering: .relaxed)
        return false
      }
      offset += written
    }
    return true
  }

  /// A text (logfmt) log handler whose lines go through ``write(_:to:)`` to `descriptor` (stderr
  /// by default).
  public static func textHandler(
    label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil, descriptor: Int32 = 2
  ) -> LogfmtLogHandler {
    LogfmtLogHandler(label: label, level: level, metadataProvider: metadataProvider) { line in
      write(line, to: descriptor)
    }
  }
}
