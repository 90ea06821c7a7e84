import Dispatch
public import InnerPeace
import Logging
import NIOConcurrencyHelpers
import Prometheus

/// Render worker processes (the very ``WorkerPool`` of `serve`) for a caller outside the server:
/// `innerpeace batch`, whose render threads block on it. A card whose render crashes its worker
/// (a trap, an abort, a signal) or misses the deadline is one failed card; its worker is replaced
/// and the other cards go on. The cards rendering at once total at most `pixelBudget` pixels (a
/// larger card renders alone), and a worker holding more than `restingLimitBytes` between cards is
/// replaced.
public final class IsolatedRenderer: Sendable {
  private let pool: WorkerPool<ContinuousClock>
  /// The pool's supervisor, until ``shutdown()``.
  private let supervisor: Task<Void, Never>

  /// Why the workers could not start (a bad catalog, a missing binary).
  public struct StartFailure: Error, CustomStringConvertible {
    public let description: String
  }

  /// Makes the pool of `workers` worker processes with `launch`; ``waitUntilReady()`` starts them.
  public init(workers: Int, launch: WorkerLaunch, renderTimeout: Duration, restingLimitBytes: Int?, pixelBudget: Int) {
    let pool = WorkerPool(
      count: workers, launch: launch, renderTimeout: renderTimeout, restingLimitBytes: restingLimitBytes,
      pixelBudget: pixelBudget, clock: ContinuousClock(), registry: PrometheusCollectorRegistry(),
      logger: Logger(label: "innerpeace") { _ in SwiftLogNoOpLogHandler() })
    self.pool = pool
    supervisor = Task { _ = try? await pool.run() }
  }

  /// Starts the workers (each loads the catalog and the fonts) and waits until all are ready;
  /// throws if one cannot start. Blocks the calling thread.
  public func waitUntilReady() throws(StartFailure) {
    let failure = Self.blocking { [pool] () async -> WorkerFailure? in
      do throws(WorkerFailure) {
        try await pool.start()
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw StartFailure(description: "a render worker \(failure.description)") }
  }

  /// Renders one card in a worker process; blocks the calling thread.
  ///
  /// The pool gives up on a render that waited for a worker longer than its start-up timeout
  /// (30 s), which the service answers with a 503. A batch has no client to answer: with many
  /// jobs behind a small pixel budget a card may wait longer for its turn, so it waits again as
  /// long as workers are running (others are rendering), and fails only when none is running
  /// (they cannot start).
  public func render(_ request: CardRequest) -> Result<FinishedCard, InnerPeaceError> {
    for _ in 0..<Self.maximumWaits {
      switch Self.blocking({ [pool] in await pool.render(request) }) {
      case .card(let card): return .success(card)
      case .failed(let error): return .failure(error)
      case .unavailable:
        if pool.runningCount == 0 { return .failure(.renderFailed(reason: "no render worker could be started")) }
      }
    }
    return .failure(.renderFailed(reason: "no render worker became free"))
  }

  /// How many times a render waits its turn (each up to the pool's start-up timeout).
  static let maximumWaits = 1_000

  /// Stops the workers once the renders in flight are back; returns when all are reaped.
  public func shutdown() {
    pool.requestStop()
    Self.blocking { [supervisor] in await supervisor.value }
  }

  /// Runs `operation` as a task and blocks the calling thread (one of the caller's own, never
  /// one of the cooperative pool's) until it is done.
  private static func blocking<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) -> Value {
    let result = NIOLockedValueBox<Value?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let value = await operation()
      result.withLockedValue { $0 = value }
      done.signal()
    }
    done.wait()
    return result.withLockedValue { $0! }
  }
}
