import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Progress on stderr: a bar with count, rate and ETA on a terminal, plain lines every few
/// seconds otherwise, nothing with --quiet; and the summary line at the end.
final class BatchProgress: Sendable {
  let total: Int
  let quiet: Bool
  let isTerminal: Bool
  private let started = ContinuousClock.now
  private let counts = Mutex((done: 0, rendered: 0, skipped: 0, failed: 0))

  init(total: Int, quiet: Bool) {
    self.total = total
    self.quiet = quiet
    isTerminal = isatty(STDERR_FILENO) != 0
  }

  /// How often the runner calls ``report()``.
  var interval: DispatchTimeInterval { isTerminal ? .milliseconds(200) : .seconds(5) }

  func advance(skipped: Bool = false, failed: Bool = false) {
    counts.withLock { counts in
      counts.done += 1
      if failed { counts.failed += 1 } else if skipped { counts.skipped += 1 } else { counts.rendered += 1 }
    }
  }

  func report() {
    guard !quiet else { return }
    let snapshot = counts.withLock { $0 }
    let elapsed = seconds(since: started)
    let rate = elapsed > 0 ? Double(snapshot.rendered) / elapsed : 0
    let remaining = total - snapshot.done
    let eta = rate > 0 ? BatchProgress.clock(Double(remaining) / rate) : "--:--"
    if isTerminal {
      let width = 24
      let filled = total > 0 ? width * snapshot.done / total : width
      let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
      let line = String(
        format: "\r  %d/%d %@ %3d%%  %.1f cards/s  ETA %@  ", snapshot.done, total, bar,
        total > 0 ? 100 * snapshot.done / total : 100, rate, eta)
      FileHandle.standardError.write(Data(line.utf8))
    } else {
      warn(
        String(
          format: "batch: %d/%d done (%d rendered, %d skipped, %d failed), %.1f cards/s, ETA %@", snapshot.done, total,
          snapshot.rendered, snapshot.skipped, snapshot.failed, rate, eta))
    }
  }

  /// The summary line (always printed, even with --quiet).
  func finish(_ outcome: BatchOutcome) {
    if isTerminal && !quiet { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    let rate = outcome.elapsed > 0 ? Double(outcome.rendered) / outcome.elapsed : 0
    warn(
      String(
        format: "batch: %d rendered, %d skipped, %d failed in %.1f s (%.1f cards/s)", outcome.rendered, outcome.skipped,
        outcome.failures.count, outcome.elapsed, rate))
  }

  static func clock(_ seconds: Double) -> String {
    let whole = Int(seconds.rounded())
    return whole >= 3600
      ? String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
      : String(format: "%d:%02d", whole / 60, whole % 60)
  }
}
