import Foundation
import Logging
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// Log lines that cannot be written (a full disk) are dropped and counted, never a trap, and the
/// count is the `innerpeace_log_lines_dropped_total` metric.
@Suite(.serialized) struct LogOutputTests {
  static var devFullAvailable: Bool { FileManager.default.fileExists(atPath: "/dev/full") }

  @Test(.enabled(if: devFullAvailable, "needs /dev/full"))
  func unwritableLinesAreDroppedAndCounted() throws {
    let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
    try #require(full >= 0)
    defer { close(full) }
    let metrics = ServerMetrics()
    let before = metricValue(
      String(decoding: metrics.exposition(), as: UTF8.self), "innerpeace_log_lines_dropped_total")
    let dropped = LogOutput.droppedLines

    // Both handlers of the service: the text one and the JSON one.
    let text = Logger(label: "innerpeace") { LogOutput.textHandler(label: $0, level: .info, descriptor: full) }
    text.info("a line that does not fit", metadata: ["key": "value"])
    let json = Logger(label: "innerpeace") { label in
      JSONLogHandler(label: label, level: .info) { line in LogOutput.write(line, to: full) }
    }
    json.info("another line that does not fit")
    #expect(LogOutput.droppedLines - dropped >= 2)

    let after = metricValue(String(decoding: metrics.exposition(), as: UTF8.self), "innerpeace_log_lines_dropped_total")
    #expect(after != nil, "no innerpeace_log_lines_dropped_total metric")
    #expect(
      (after ?? 0) - (before ?? 0) >= 2, "before \(String(describing: before)), after \(String(describing: after))")
  }

  /// A line that fits is written whole and not counted.
  @Test func writableLinesAreWrittenWhole() throws {
    var ends: [Int32] = [-1, -1]
    try #require(pipe(&ends) == 0)
    defer { close(ends[0]) }
    let line = "innerpeace: a line\n"
    #expect(LogOutput.write(line, to: ends[1]))
    close(ends[1])
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = read(ends[0], &buffer, buffer.count)
    #expect(Array(buffer[..<max(0, count)]) == Array(line.utf8))
  }
}
