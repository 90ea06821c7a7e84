import Foundation
import InnerPeace
import Logging
import Prometheus

/// A fixed number of render worker processes, and the one thread that starts them.
///
/// Each render takes an idle worker, sends it the request and waits for the answer with a
/// deadline. A worker that dies (a trap, an abort, a signal), closes, garbles its answer or misses
/// the deadline (it is killed) costs that one request a 500; it is reaped and the supervisor
/// thread starts another in its place. A worker that dies before it is even ready counts as a
/// start-up failure: those back off (0.25 s, doubling, up to 30 s) and while no worker is running
/// renders are answered 503.
///
/// Memory: a worker that reports holding more than `restingLimitBytes` at rest (its caches and
/// heap, before a render) is retired after that render and replaced, so caches that grow with
/// every new font size (Cairo's and pixman's glyph images) cannot grow without bound. And the
/// cards rendering at once may total at most `pixelBudget` pixels (a larger card renders alone),
/// taken in arrival order, so the working sets of several large cards never add up.
///
/// Workers are started only by the supervisor thread, which lives as long as the pool: a worker
/// arms PR_SET_PDEATHSIG, which fires when the thread that spawned it ends, so workers die with
/// the server even if it is killed.
final class WorkerPool: @unchecked Sendable {
  private enum Slot {
    case idle(WorkerProcess)
    case busy
    case starting
    /// Needs a worker (never started, or its worker died).
    case empty
  }

  let launch: WorkerLaunch
  let renderTimeout: Duration
  let restingLimitBytes: Int?
  let pixelBudget: Int
  let startTimeout: Duration
  private let logger: Logger
  private let workersGauge: Gauge
  private let failuresCounter: Counter
  private let retirementsCounter: Counter

  // Everything below is guarded by `condition`.
  private let condition = NSCondition()
  private var slots: [Slot]
  private var startFailures = 0
  private var retryAt: Date?
  private var firstStartDone = false
  private var firstStartFailure: WorkerFailure?
  private var stopping = false
  private var stopped = false
  /// Pixels of the cards being rendered now.
  private var pixelsInFlight = 0
  /// Tickets of the renders waiting for a worker, in arrival order.
  private var line: [Int] = []
  private var nextTicket = 0
  /// Workers retired for their memory, for the supervisor to stop.
  private var retired: [WorkerProcess] = []

  init(
    count: Int, launch: WorkerLaunch, renderTimeout: Duration, startTimeout: Duration = .seconds(30),
    restingLimitBytes: Int? = nil, pixelBudget: Int = .max, registry: PrometheusCollectorRegistry, logger: Logger
  ) {
    self.launch = launch
    self.renderTimeout = renderTimeout
    self.restingLimitBytes = restingLimitBytes
    self.pixelBudget = pixelBudget
    self.startTimeout = startTimeout
    self.logger = logger
    slots = Array(repeating: .empty, count: count)
    workersGauge = registry.gauge(
      "innerpeace_render_workers", unit: "", help: "Render worker processes running and ready for work.")
    failuresCounter = registry.counter(
      "innerpeace_render_worker_failures", unit: "total",
      help: "Render worker processes that died, hung or failed to start (each is replaced).")
    retirementsCounter = registry.counter(
      "innerpeace_render_worker_retirements", unit: "total",
      help: "Render worker processes replaced because they held more memory at rest than their limit.")
    let supervisor = Thread { [self] in supervise() }
    supervisor.name = "innerpeace-worker-supervisor"
    supervisor.start()
  }

  /// Waits until every worker has started once. Throws the first start-up failure: a worker that
  /// cannot start at all (a bad catalog, a missing binary) should stop the server from starting.
  func waitUntilReady() throws(WorkerFailure) {
    condition.lock()
    defer { condition.unlock() }
    while !firstStartDone { condition.wait() }
    if let firstStartFailure { throw firstStartFailure }
  }

  /// Workers running (idle or rendering).
  var runningCount: Int {
    condition.lock()
    defer { condition.unlock() }
    return running
  }

  private var running: Int {
    slots.count(where: { slot in
      switch slot {
      case .idle, .busy: true
      case .starting, .empty: false
      }
    })
  }

  /// Renders one request on a worker; blocks the calling thread (a render pool thread).
  func render(_ request: CardRequest) -> RenderOutcome {
    // A worker found dead before it got the request (killed while idle): the request is safe to
    // send once more, to another worker.
    let pixels = request.preset.geometry.canvas.width * request.preset.geometry.canvas.height
    for attempt in 1...2 {
      guard let (index, worker) = take(pixels: pixels) else {
        return .unavailable(retryAfterSeconds: retryAfterSeconds())
      }
      do throws(WorkerFailure) {
        let result = try worker.render(request, deadline: .now + renderTimeout)
        if let restingLimitBytes, worker.restingBytes > restingLimitBytes {
          retire(index, worker, pixels: pixels)
        } else {
          giveBack(index, worker, pixels: pixels)
        }
        switch result {
        case .success(let card): return .card(card)
        case .failure(let error): return .failed(error)
        }
      } catch {
        giveBack(index, nil, pixels: pixels)
        if error.requestUnsent && attempt == 1 {
          logger.warning("render worker lost before a request", metadata: ["reason": .string(error.description)])
          continue
        }
        return .failed(.renderFailed(reason: "render \(error.description)"))
      }
    }
    return .failed(.renderFailed(reason: "render workers lost twice before a request"))
  }

  /// Stops the workers once every render has come back: each sees its stdin close and exits, or
  /// is killed after a grace period. Returns when all are reaped.
  func shutdown() async {
    beginStopping()
    while !isStopped { try? await Task.sleep(for: .milliseconds(5)) }
  }

  /// ``shutdown()`` for a caller that is not async (``IsolatedRenderer``): blocks until every
  /// worker is reaped.
  func shutdownAndWait() {
    beginStopping()
    condition.lock()
    defer { condition.unlock() }
    while !stopped { condition.wait() }
  }

  private func beginStopping() {
    condition.lock()
    defer { condition.unlock() }
    stopping = true
    condition.broadcast()
  }

  private var isStopped: Bool {
    condition.lock()
    defer { condition.unlock() }
    return stopped
  }

  // MARK: Slots

  /// An idle worker, marked busy, once this render's turn has come and its pixels fit the budget;
  /// or `nil` when none can be had: the pool is stopping, no worker is running while start-ups
  /// fail, or none could be had within the start-up timeout.
  private func take(pixels: Int) -> (Int, WorkerProcess)? {
    condition.lock()
    defer { condition.unlock() }
    let deadline = Date() + startTimeout / .seconds(1)
    let ticket = nextTicket
    nextTicket += 1
    line.append(ticket)
    defer {
      line.removeAll { $0 == ticket }
      condition.broadcast()
    }
    while !stopping {
      if line.first == ticket && (pixelsInFlight == 0 || pixelsInFlight + pixels <= pixelBudget) {
        for (index, slot) in slots.enumerated() {
          if case .idle(let worker) = slot {
            slots[index] = .busy
            pixelsInFlight += pixels
            return (index, worker)
          }
        }
      }
      if startFailures > 0 && running == 0 { return nil }
      guard condition.wait(until: deadline) else { return nil }
    }
    return nil
  }

  /// Returns a slot: with its worker, or empty for the supervisor to fill (the worker failed).
  private func giveBack(_ index: Int, _ worker: WorkerProcess?, pixels: Int) {
    condition.lock()
    defer { condition.unlock() }
    pixelsInFlight -= pixels
    if let worker {
      slots[index] = .idle(worker)
    } else {
      slots[index] = .empty
      failuresCounter.increment()
    }
    workersGauge.set(Double(running))
    condition.broadcast()
  }

  /// Empties a slot whose worker holds too much memory at rest: the supervisor stops the worker
  /// and starts another in its place.
  private func retire(_ index: Int, _ worker: WorkerProcess, pixels: Int) {
    condition.lock()
    defer { condition.unlock() }
    pixelsInFlight -= pixels
    slots[index] = .empty
    retired.append(worker)
    retirementsCounter.increment()
    logger.info(
      "render worker replaced: it held more memory at rest than --worker-memory-mb",
      metadata: [
        "pid": .stringConvertible(worker.pid), "resting_mib": .stringConvertible(worker.restingBytes >> 20),
      ])
    workersGauge.set(Double(running))
    condition.broadcast()
  }

  private func retryAfterSeconds() -> Int {
    condition.lock()
    defer { condition.unlock() }
    guard let retryAt else { return 1 }
    return max(1, Int(retryAt.timeIntervalSinceNow.rounded(.up)))
  }

  // MARK: The supervisor thread

  private func supervise() {
    condition.lock()
    while !stopping {
      if let worker = retired.popLast() {
        condition.unlock()
        let ending = worker.stop(grace: 2000)
        logger.debug("render worker retired", metadata: ["pid": .stringConvertible(worker.pid), "ending": "\(ending)"])
        condition.lock()
        continue
      }
      guard let index = slots.firstIndex(where: { if case .empty = $0 { true } else { false } }) else {
        condition.wait()
        continue
      }
      if let retryAt, retryAt > Date() {
        _ = condition.wait(until: retryAt)
        continue
      }
      slots[index] = .starting
      condition.unlock()
      let started = Result { () throws(WorkerFailure) -> WorkerProcess in
        let worker = try WorkerProcess.spawn(launch)
        try worker.awaitReady(deadline: .now + startTimeout)
        return worker
      }
      condition.lock()
      switch started {
      case .success(let worker):
        slots[index] = .idle(worker)
        startFailures = 0
        retryAt = nil
        logger.debug("render worker started", metadata: ["pid": .stringConvertible(worker.pid)])
      case .failure(let failure):
        slots[index] = .empty
        startFailures += 1
        let delay = min(0.25 * pow(2, Double(startFailures - 1)), 30)
        retryAt = Date() + delay
        failuresCounter.increment()
        if firstStartDone {
          logger.error(
            "render worker failed to start; retrying",
            metadata: ["reason": .string(failure.description), "retry_in_s": .stringConvertible(delay)])
        } else {
          firstStartFailure = failure
        }
      }
      if !firstStartDone && (firstStartFailure != nil || running == slots.count) { firstStartDone = true }
      workersGauge.set(Double(running))
      condition.broadcast()
    }
    // Stopping: wait for renders in flight (each bounded by the render timeout), then stop all.
    while slots.contains(where: { if case .busy = $0 { true } else { false } }) { condition.wait() }
    var workers = retired
    retired = []
    for (index, slot) in slots.enumerated() {
      if case .idle(let worker) = slot { workers.append(worker) }
      slots[index] = .empty
    }
    firstStartDone = true
    condition.unlock()
    for worker in workers {
      let ending = worker.stop(grace: 2000)
      logger.debug("render worker stopped", metadata: ["pid": .stringConvertible(worker.pid), "ending": "\(ending)"])
    }
    condition.lock()
    stopped = true
    workersGauge.set(Double(0))
    condition.broadcast()
    condition.unlock()
  }
}

/// How one render ended, wherever it ran.
enum RenderOutcome: Sendable {
  case card(RenderedCard)
  case failed(InnerPeaceError)
  /// No worker can take it now (they keep failing to start): answer 503 with this Retry-After.
  case unavailable(retryAfterSeconds: Int)
}
