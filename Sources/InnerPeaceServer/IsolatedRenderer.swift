public import InnerPeace
import Logging
import Prometheus

/// Render worker processes (the very ``WorkerPool`` of `serve`) for a caller outside the server:
/// `innerpeace batch`. A card whose render crashes its worker (a trap, an abort, a signal) or
/// misses the deadline is one failed card; its worker is replaced and the other cards go on. The
/// cards rendering at once total at most `pixelBudget` pixels (a larger card renders alone), and
/// a worker holding more than `restingLimitBytes` between cards is replaced.
public final class IsolatedRenderer: Sendable {
  private let pool: WorkerPool

  /// Why the workers could not start (a bad catalog, a missing binary).
  public struct StartFailure: Error, CustomStringConvertible {
    public let description: String
  }

  /// Starts `workers` worker processes with `launch` (each loads the catalog and the fonts).
  public init(workers: Int, launch: WorkerLaunch, renderTimeout: Duration, restingLimitBytes: Int?, pixelBudget: Int) {
    pool = WorkerPool(
      count: workers, launch: launch, renderTimeout: renderTimeout, restingLimitBytes: restingLimitBytes,
      pixelBudget: pixelBudget, registry: PrometheusCollectorRegistry(),
      logger: Logger(label: "innerpeace") { _ in SwiftLogNoOpLogHandler() })
  }

  /// Waits until every worker has started once; throws if one cannot start.
  public func waitUntilReady() throws(StartFailure) {
    do throws(WorkerFailure) { try pool.waitUntilReady() } catch {
      throw StartFailure(description: "a render worker \(error.description)")
    }
  }

  /// Renders one card in a worker process; blocks the calling thread.
  public func render(_ request: CardRequest) -> Result<RenderedCard, InnerPeaceError> {
    switch pool.render(request) {
    case .card(let card): .success(card)
    case .failed(let error): .failure(error)
    case .unavailable: .failure(.renderFailed(reason: "no render worker could be started"))
    }
  }

  /// Stops the workers once the renders in flight are back; returns when all are reaped.
  public func shutdown() { pool.shutdownAndWait() }
}
