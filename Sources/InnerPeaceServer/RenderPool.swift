import InnerPeace
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import Prometheus

/// Runs renders off the event loop on a fixed number of threads, behind an admission limit.
///
/// At most `workers + queueDepth` renders are admitted at once; past that, ``admit()`` fails at
/// once so the caller can answer 503 instead of queueing without bound.
///
/// With ``RenderIsolation/processes(_:)`` each thread hands its render to one of as many worker
/// processes (``WorkerPool``) and waits for the answer, so a render that traps costs one request
/// instead of the server; with ``RenderIsolation/threads`` the threads render themselves.
final class RenderPool: Sendable {
  let workers: Int
  let queueDepth: Int
  private let threads: NIOThreadPool
  private let processes: WorkerPool?
  private let admitted = NIOLockedValueBox(0)

  init(
    workers: Int, queueDepth: Int, isolation: RenderIsolation = .threads, renderTimeout: Duration = .seconds(30),
    workerRestingLimitBytes: Int? = nil, pixelBudget: Int = .max,
    registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), logger: Logger = Logger(label: "innerpeace")
  ) {
    self.workers = workers
    self.queueDepth = queueDepth
    threads = NIOThreadPool(numberOfThreads: workers)
    threads.start()
    switch isolation {
    case .threads: processes = nil
    case .processes(let launch):
      processes = WorkerPool(
        count: workers, launch: launch, renderTimeout: renderTimeout, restingLimitBytes: workerRestingLimitBytes,
        pixelBudget: pixelBudget, registry: registry, logger: logger)
    }
  }

  /// Waits until the worker processes (if any) have started; throws if one cannot start.
  func waitUntilReady() throws(WorkerFailure) { try processes?.waitUntilReady() }

  /// Worker processes running, or `nil` when renders run on threads in this process.
  var runningWorkerProcesses: Int? { processes?.runningCount }

  /// Renders one card on a pool thread: in a worker process or on the thread itself.
  func render(_ request: CardRequest, with renderer: some CardRendering) async throws -> RenderOutcome {
    if let processes {
      return try await threads.runIfActive { processes.render(request) }
    }
    return try await threads.runIfActive { () -> RenderOutcome in
      RenderFaults.inject(for: request)
      do throws(InnerPeaceError) {
        return .card(try renderer.render(request))
      } catch {
        return .failed(error)
      }
    }
  }

  /// A slot for one render, or `nil` when the pool and its queue are full.
  func admit() -> Admission? {
    let granted = admitted.withLockedValue { count -> Bool in
      guard count < workers + queueDepth else { return false }
      count += 1
      return true
    }
    return granted ? Admission(pool: self) : nil
  }

  fileprivate func release() { admitted.withLockedValue { $0 -= 1 } }

  func shutdown() async throws {
    await processes?.shutdown()
    try await threads.shutdownGracefully()
  }

  /// One admitted render; release it exactly once when the render is over.
  final class Admission: Sendable {
    private let pool: RenderPool
    private let released = NIOLockedValueBox(false)

    fileprivate init(pool: RenderPool) { self.pool = pool }

    func release() {
      let first = released.withLockedValue { done -> Bool in
        defer { done = true }
        return !done
      }
      if first { pool.release() }
    }

    deinit { release() }
  }
}
