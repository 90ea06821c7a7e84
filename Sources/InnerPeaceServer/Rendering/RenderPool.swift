import Foundation
import InnerPeace
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import Prometheus
import ServiceLifecycle

/// Runs renders off the event loop on a fixed number of threads, behind an admission limit.
///
/// At most `workers + queueDepth` renders are admitted at once; past that, ``admit(client:)``
/// fails at once so the caller can answer 503 instead of queueing without bound. No client can
/// take them all: one client may have at most `rendersPerClient` renders running and
/// `queuedPerClient` waiting (``RenderGate``), so while one floods the pool with costly cards
/// another still gets a worker.
///
/// With ``RenderIsolation/processes(_:)`` each render goes to one of as many worker processes
/// (``WorkerPool``), so a render that traps costs one request instead of the server; with
/// ``RenderIsolation/threads`` it runs on one of as many threads in this process.
///
/// A `Service` of the application's group: it supervises the worker processes, and once the
/// server has drained (graceful shutdown) it stops them and the threads.
final class RenderPool: Service, Sendable {
  let workers: Int
  let queueDepth: Int
  private let threads: NIOThreadPool
  private let processes: WorkerPool<ContinuousClock>?
  let gate: RenderGate
  /// Whether ``start()`` has returned: the workers (or threads) have been ready once.
  private let started = NIOLockedValueBox(false)

  init(
    workers: Int, queueDepth: Int, rendersPerClient: Int = .max, queuedPerClient: Int = .max,
    isolation: RenderIsolation = .threads, renderTimeout: Duration = .seconds(30),
    workerRestingLimitBytes: Int? = nil, pixelBudget: Int = .max,
    registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), logger: Logger = Logger(label: "innerpeace")
  ) {
    self.workers = workers
    self.queueDepth = queueDepth
    gate = RenderGate(
      workers: workers, queueDepth: queueDepth, rendersPerClient: rendersPerClient, queuedPerClient: queuedPerClient)
    threads = NIOThreadPool(numberOfThreads: workers)
    threads.start()
    switch isolation {
    case .threads: processes = nil
    case .processes(let launch):
      processes = WorkerPool(
        count: workers, launch: launch, renderTimeout: renderTimeout, restingLimitBytes: workerRestingLimitBytes,
        pixelBudget: pixelBudget, clock: ContinuousClock(), registry: registry, logger: logger)
    }
  }

  /// Starts the worker processes (if any) and waits until they are ready; throws if one cannot
  /// start.
  func start() async throws(WorkerFailure) {
    try await processes?.start()
    started.withLockedValue { $0 = true }
  }

  /// Replaces the worker processes (if any) by new ones, for a reloaded catalog: they are started
  /// with the launch taken before the catalog was read again (``workerLaunchForReload()``); the
  /// old ones retire after their renders (``WorkerPool/replaceWorkers(with:)``).
  /// - Throws: why a new worker could not start; the old ones keep serving.
  func replaceWorkers(with launch: WorkerLaunch?) async throws(WorkerFailure) {
    guard let processes, let launch else { return }
    try await processes.replaceWorkers(with: launch)
  }

  /// How a reload's workers are to be started, stamped with the time now (before the catalog is
  /// read again: a photo changed after it is refused); `nil` without worker processes.
  func workerLaunchForReload() -> WorkerLaunch? {
    processes?.launch.stamped(nanosecondsSince1970: Int64(Date().timeIntervalSince1970 * 1_000_000_000))
  }

  /// Workers ready for a render now: `nil` before ``start()`` has returned; then the worker
  /// processes running (idle or rendering), or the threads.
  var readyWorkers: Int? {
    guard started.withLockedValue({ $0 }) else { return nil }
    return processes?.runningCount ?? workers
  }

  /// Supervises the worker processes (if any) until graceful shutdown, then stops them and the
  /// threads.
  func run() async throws {
    if let processes {
      try await processes.run()
    } else {
      try? await gracefulShutdown()
    }
    try await threads.shutdownGracefully()
  }

  /// Renders one admitted card on a pool thread (in a worker process or on the thread itself),
  /// once its client's turn has come.
  func render(
    _ request: CardRequest, with renderer: some CardRendering, admission: Admission
  ) async throws -> RenderOutcome {
    await gate.startRendering(client: admission.client)
    defer { gate.stopRendering(client: admission.client) }
    if let processes { return await processes.render(request) }
    return try await threads.runIfActive { () -> RenderOutcome in
      RenderFaults.inject(for: request)
      do throws(InnerPeaceError) {
        return .card(FinishedCard(try renderer.render(request)))
      } catch {
        return .failed(error)
      }
    }
  }

  /// A slot for one render of `client` (`nil`: no per-client limit), or why there is none: the
  /// pool and its queue are full, or the client has its share of them.
  func admit(client: String?) -> Result<Admission, RenderGate.Refusal> {
    if let refusal = gate.tryAdmit(client: client) { return .failure(refusal) }
    return .success(Admission(pool: self, client: client))
  }

  fileprivate func release(client: String?) { gate.leave(client: client) }

  /// Stops the threads, for a pool outside a service group (with threads only: worker
  /// processes stop with the group's graceful shutdown).
  func shutdown() async throws {
    processes?.requestStop()
    try await threads.shutdownGracefully()
  }

  /// One admitted render; release it exactly once when the render is over.
  final class Admission: Sendable {
    private let pool: RenderPool
    let client: String?
    private let released = NIOLockedValueBox(false)

    fileprivate init(pool: RenderPool, client: String?) {
      self.pool = pool
      self.client = client
    }

    func release() {
      let first = released.withLockedValue { done -> Bool in
        defer { done = true }
        return !done
      }
      if first { pool.release(client: client) }
    }

    deinit { release() }
  }
}
