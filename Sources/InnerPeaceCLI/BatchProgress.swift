import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Progress on stderr: a bar with count, rate and ETA on a terminal (shorter on a narrow one),
/// plain lines every few seconds otherwise and on a terminal that cannot redraw a line
/// (`TERM=dumb`), nothing with --quiet; and the summary line at the end.
final class BatchProgress: Sendable {
  let total: Int
  let quiet: Bool
  /// Whether progress is a bar redrawn in place (on a terminal that is not `TERM=dumb`).
  let drawsBar: Bool
  /// The terminal's width in columns: `COLUMNS` if set, else the terminal's own, else 80.
  let columns: Int
  private let started = ContinuousClock.now
  private let counts = Mutex((done: 0, rendered: 0, skipped: 0, failed: 0))

  init(total: Int, quiet: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.total = total
    self.quiet = quiet
    drawsBar = isatty(STDERR_FILENO) != 0 && environment["TERM"] != "dumb"
    var size = winsize()
    if let value = environment["COLUMNS"].flatMap({ Int($0) }), value > 0 {
      columns = value
    } else if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 {
      columns = Int(size.ws_col)
    } else {
      columns = 80
    }
  }

  /// How often the runner calls ``report()``.
  var interval: DispatchTimeInterval { drawsBar ? .milliseconds(200) : .seconds(5) }

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
    if drawsBar {
      StandardStreams.writeError("\r" + barLine(done: snapshot.done, rate: rate, eta: eta))
    } else {
      warn(
        String(
          format: "batch: %d/%d done (%d rendered, %d skipped, %d failed), %.1f cards/s, ETA %@", snapshot.done, total,
          snapshot.rendered, snapshot.skipped, snapshot.failed, rate, eta))
    }
  }

  /// The bar's line, in the longest form that fits the terminal without wrapping (a wrapped line
  /// cannot be redrawn in place): the bar with count, percentage, rate and ETA; then count,
  /// percentage and ETA; then the percentage alone, cut to the width.
  func barLine(done: Int, rate: Double, eta: String) -> String {
    let percent = total > 0 ? 100 * done / total : 100
    let width = 24
    let filled = total > 0 ? width * done / total : width
    let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    let forms = [
      String(format: "  %d/%d %@ %3d%%  %.1f cards/s  ETA %@  ", done, total, bar, percent, rate, eta),
      String(format: " %d/%d %3d%% ETA %@ ", done, total, percent, eta),
      String(format: "%3d%%", percent),
    ]
    let fitting = max(1, columns - 1)
    return forms.first { $0.count <= fitting } ?? String(forms[forms.count - 1].suffix(fitting))
  }

  /// The summary line (always printed, even with --quiet).
  func finish(_ outcome: BatchOutcome) {
    if drawsBar && !quiet { StandardStreams.writeError("\r\u{1B}[K") }
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
