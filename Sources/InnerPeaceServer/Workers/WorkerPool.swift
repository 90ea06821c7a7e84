import Foundation
import InnerPeace
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

/// A fixed number of render worker processes (``WorkerConnection``), and their supervisor: a
/// swift-service-lifecycle `Service` in the application's `ServiceGroup`.
///
/// Each render takes an idle worker, in arrival order, sends it the request and waits for the
/// answer, with a deadline. A worker that dies (a trap, an abort, a signal), closes, garbles its
/// answer or misses the deadline (it is killed) costs that one request a 500. A worker that dies
/// while idle is seen the moment it does (its exit watch). Either way it is reaped, counted
/// (`innerpeace_render_worker_failures`), logged and replaced at once by the supervisor. A worker
/// that dies before it is even ready counts as a start-up failure: those back off (0.25 s,
/// doubling, up to 30 s) and while no worker is running renders are answered 503.
///
/// Memory: a worker that reports holding more than `restingLimitBytes` at rest (its caches and
/// heap, before a render) is retired after that render and replaced, so caches that grow with
/// every new font size (Cairo's and pixman's glyph images) cannot grow without bound. And the
/// cards rendering at once may total at most `pixelBudget` pixels (a larger card renders alone),
/// taken in arrival order, so the working sets of several large cards never add up.
///
/// CPU: a PNG card is encoded on two threads while at most half the cores are rendering (the
/// other core would otherwise sit idle: the same bytes, sooner), on one otherwise
/// (``encoderThreads(rendersInFlight:cores:)``).
///
/// Every deadline (a render's, a start-up's, a wait for a worker, the back-off) is a task timeout
/// on one clock, `C`: `ContinuousClock` in the server, one the test moves in the tests.
///
/// Lifecycle: ``start()`` starts every worker and waits until all are ready (a worker that cannot
/// start at all throws); ``run()`` supervises them until graceful shutdown (or ``requestStop()``),
/// then waits for the renders in flight and stops the workers: each sees its stdin close and
/// exits, or is killed after a grace period. ``replaceWorkers(with:)`` (a catalog reload) starts a
/// new set of workers beside the old ones and swaps them in, each old one retiring after its
/// render.
final class WorkerPool<C: Clock<Duration>>: Service, Sendable {
  let renderTimeout: Duration
  let restingLimitBytes: Int?
  let pixelBudget: Int
  let startTimeout: Duration
  let clock: C
  private let eventLoops: any EventLoopGroup
  /// The processors this process may run on.
  private let cores = ProcessInfo.processInfo.activeProcessorCount
  private let logger: Logger
  private let workersGauge: Gauge
  private let failuresCounter: Counter
  private let retirementsCounter: Counter
  private let state: NIOLockedValueBox<State>
  private let events: AsyncStream<Event>
  private let eventSink: AsyncStream<Event>.Continuation

  /// A worker taken for one render.
  struct Lease: Sendable {
    let slot: Int
    let worker: WorkerConnection
    let pixels: Int
    /// Renders under way once this one was granted, this one among them.
    let rendersInFlight: Int
  }

  private enum Slot {
    case idle(WorkerConnection)
    case busy(WorkerConnection)
    case starting
    /// Needs a worker (its worker failed or was retired).
    case empty

    /// Whether a worker is in the slot (idle or rendering).
    var isTaken: Bool {
      switch self {
      case .idle, .busy: true
      case .starting, .empty: false
      }
    }
  }

  /// Waiting renders to resume, each with its worker or none (outside the lock).
  private typealias Wakeups = [(CheckedContinuation<Lease?, Never>, Lease?)]

  private struct Waiter {
    let ticket: Int
    let pixels: Int
    var continuation: CheckedContinuation<Lease?, Never>?
  }

  private struct State {
    var slots: [Slot]
    /// How workers are started now, and how many times it was replaced (a worker started with an
    /// older one is not placed).
    var launch: WorkerLaunch
    var launchGeneration = 0
    /// Workers started with the newest launch for slots whose old worker is still rendering:
    /// each takes its slot when that render is back.
    var successors: [Int: WorkerConnection] = [:]
    /// Renders waiting for a worker, in arrival order: only the first may take one.
    var line: [Waiter] = []
    /// Workers handed to a waiter before it was ready to take them.
    var granted: [Int: Lease] = [:]
    var nextTicket = 0
    /// Pixels of the cards being rendered now.
    var pixelsInFlight = 0
    var startFailures = 0
    var retryAt: C.Instant?
    var stopping = false
    /// The supervisor's wait for the renders in flight, when stopping.
    var drained: CheckedContinuation<Void, Never>?
    /// Waits for a number of workers running (``waitUntilRunning(_:)``).
    var runningWaiters: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Waits for a number of workers that were cancelled before they began waiting.
    var cancelledRunningWaits: Set<Int> = []
    var nextRunningWait = 0

    var running: Int {
      slots.count(where: {
        switch $0 {
        case .idle, .busy: true
        case .starting, .empty: false
        }
      })
    }

    var busy: Int { slots.count(where: { if case .busy = $0 { true } else { false } }) }
  }

  /// A render's turn for a worker: now (granted, or refused), or later (it waits in line).
  private enum Turn {
    case now(Lease?)
    case later(ticket: Int)
  }

  /// The supervisor's work.
  private enum Event: Sendable {
    /// Start a worker in this slot.
    case fill(Int)
    /// Stop this worker (it holds too much memory at rest).
    case retire(WorkerConnection)
    case stop
  }

  init(
    count: Int, launch: WorkerLaunch, renderTimeout: Duration, startTimeout: Duration = .seconds(30),
    restingLimitBytes: Int? = nil, pixelBudget: Int = .max, clock: C,
    eventLoops: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    registry: PrometheusCollectorRegistry, logger: Logger
  ) {
    self.renderTimeout = renderTimeout
    self.restingLimitBytes = restingLimitBytes
    self.pixelBudget = pixelBudget
    self.startTimeout = startTimeout
    self.clock = clock
    self.eventLoops = eventLoops
    self.logger = logger
    state = NIOLockedValueBox(State(slots: Array(repeating: .empty, count: count), launch: launch))
    (events, eventSink) = AsyncStream.makeStream(of: Event.self)
    workersGauge = registry.gauge(
      "innerpeace_render_workers", unit: "", help: "Render worker processes running and ready for work.")
    failuresCounter = registry.counter(
      "innerpeace_render_worker_failures", unit: "total",
      help: "Render worker processes that died, hung or failed to start (each is replaced).")
    retirementsCounter = registry.counter(
      "innerpeace_render_worker_retirements", unit: "total",
      help: "Render worker processes replaced because they held more memory at rest than their limit.")
  }

  /// How workers are started now.
  var launch: WorkerLaunch { state.withLockedValue { $0.launch } }

  /// Workers running (idle or rendering).
  var runningCount: Int { state.withLockedValue { $0.running } }

  /// Workers rendering, and renders waiting for a worker.
  var counts: (busy: Int, waiting: Int) { state.withLockedValue { ($0.busy, $0.line.count) } }

  /// The workers' pids, slot by slot (`nil`: no worker running there).
  var pids: [pid_t?] {
    state.withLockedValue { state in
      state.slots.map {
        switch $0 {
        case .idle(let worker), .busy(let worker): worker.pid
        case .starting, .empty: nil
        }
      }
    }
  }

  /// Returns once exactly `count` workers are running (idle or rendering), as the supervisor
  /// starts and replaces them, or once the waiting task is cancelled (a test's time limit): for
  /// tests, which then look at the pool once instead of polling, and fail instead of hanging.
  package func waitUntilRunning(_ count: Int) async {
    let id = state.withLockedValue { state in
      defer { state.nextRunningWait += 1 }
      return state.nextRunningWait
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let now = state.withLockedValue { state -> Bool in
          if state.running == count || state.cancelledRunningWaits.remove(id) != nil { return true }
          state.runningWaiters.append((id, count, continuation))
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
        guard let index = state.runningWaiters.firstIndex(where: { $0.id == id }) else {
          state.cancelledRunningWaits.insert(id)
          return nil
        }
        return state.runningWaiters.remove(at: index).continuation
      }
      waiter?.resume()
    }
  }

  /// Sets the workers gauge to the workers running, and resumes the waits for that number.
  private func publishRunning(_ state: inout State) {
    let running = state.running
    workersGauge.set(Double(running))
    state.runningWaiters.removeAll { waiter in
      guard waiter.count == running else { return false }
      waiter.continuation.resume()
      return true
    }
  }

  // MARK: Starting and stopping

  /// Starts every worker and waits until all are ready. Throws the first start-up failure (after
  /// stopping the workers that did start): a worker that cannot start at all (a bad catalog, a
  /// missing binary) should stop the server from starting.
  func start() async throws(WorkerFailure) {
    let (count, launch) = state.withLockedValue { state in
      for index in state.slots.indices { state.slots[index] = .starting }
      return (state.slots.count, state.launch)
    }
    let workers: [WorkerConnection]
    do throws(WorkerFailure) { workers = try await startWorkers(count, launch: launch) } catch {
      state.withLockedValue { state in
        for index in state.slots.indices { state.slots[index] = .empty }
      }
      throw error
    }
    for (index, worker) in workers.enumerated() { place(worker, in: index) }
  }

  /// Starts `count` workers with `launch` at once and waits until all are ready; on the first
  /// failure, stops those that started and throws it.
  private func startWorkers(_ count: Int, launch: WorkerLaunch) async throws(WorkerFailure) -> [WorkerConnection] {
    let started = await withTaskGroup(of: Result<WorkerConnection, WorkerFailure>.self) { group in
      for _ in 0..<count { group.addTask { await self.startWorker(launch) } }
      var started: [Result<WorkerConnection, WorkerFailure>] = []
      for await result in group { started.append(result) }
      return started
    }
    let workers = started.compactMap { try? $0.get() }
    for case .failure(let failure) in started {
      failuresCounter.increment()
      for worker in workers { _ = await worker.stop(grace: .seconds(2), clock: clock) }
      throw failure
    }
    return workers
  }

  private func startWorker(_ launch: WorkerLaunch) async -> Result<WorkerConnection, WorkerFailure> {
    do throws(WorkerFailure) {
      return .success(
        try await WorkerConnection.start(
          launch, on: eventLoops.next(), timeout: startTimeout, clock: clock, logger: logger))
    } catch {
      return .failure(error)
    }
  }

  /// Replaces every worker by one started with `launch` (after a catalog reload: new workers load
  /// the new catalog and fonts), never with fewer workers running: the new ones start while the
  /// old ones go on rendering (for that moment there are twice as many processes), then all take
  /// their slots at once. An idle old worker is stopped at once; a rendering one finishes its
  /// render (its request is answered) and is stopped then. Workers started later (replacing a
  /// failed one) use `launch` too.
  /// - Throws: the first start-up failure, after stopping the new workers that did start; the old
  ///   workers keep serving.
  func replaceWorkers(with launch: WorkerLaunch) async throws(WorkerFailure) {
    let count = state.withLockedValue { $0.slots.count }
    let workers = try await startWorkers(count, launch: launch)
    let (retired, unused) = state.withLockedValue { state -> ([WorkerConnection], [WorkerConnection]) in
      guard !state.stopping else { return ([], workers) }
      state.launch = launch
      state.launchGeneration += 1
      var retired: [WorkerConnection] = []
      for (index, worker) in zip(state.slots.indices, workers) {
        switch state.slots[index] {
        case .idle(let old):
          state.slots[index] = .idle(worker)
          retired.append(old)
        case .busy:
          if let earlier = state.successors.updateValue(worker, forKey: index) { retired.append(earlier) }
        case .starting, .empty:
          // A start-up under way there (with the old launch) sees the slot taken and stops.
          state.slots[index] = .idle(worker)
        }
      }
      state.startFailures = 0
      state.retryAt = nil
      publishRunning(&state)
      return (retired, [])
    }
    for worker in unused { _ = await worker.stop(grace: .seconds(2), clock: clock) }
    guard unused.isEmpty else { return }
    for worker in workers { worker.exit.whenSuccess { [self] status in ended(worker, status: status) } }
    let waiters = state.withLockedValue { dispatch(&$0) }
    resume(waiters)
    for worker in retired { eventSink.yield(.retire(worker)) }
    logger.debug("render workers replaced", metadata: ["workers": .stringConvertible(count)])
  }

  /// Puts a started worker in its slot and watches it: its death while idle empties the slot.
  private func place(_ worker: WorkerConnection, in index: Int) {
    let waiters = state.withLockedValue { state in
      state.slots[index] = .idle(worker)
      state.startFailures = 0
      state.retryAt = nil
      publishRunning(&state)
      return dispatch(&state)
    }
    resume(waiters)
    logger.debug("render worker started", metadata: ["pid": .stringConvertible(worker.pid)])
    worker.exit.whenSuccess { [self] status in ended(worker, status: status) }
  }

  /// A worker's process ended. Idle, it is counted, logged and replaced here; rendering, its
  /// render sees its channel close and does the same; retired or stopped, nothing is owed.
  private func ended(_ worker: WorkerConnection, status: Int32?) {
    let index = state.withLockedValue { state -> Int? in
      guard !state.stopping,
        let index = state.slots.firstIndex(where: { if case .idle(let idle) = $0 { idle === worker } else { false } })
      else { return nil }
      state.slots[index] = .empty
      failuresCounter.increment()
      publishRunning(&state)
      return index
    }
    guard let index else { return }
    logger.error(
      "render worker ended while idle; replacing it",
      metadata: [
        "pid": .stringConvertible(worker.pid),
        "ending": .string(status.map(WorkerConnection.describe) ?? "ended"),
      ])
    eventSink.yield(.fill(index))
  }

  /// Supervises the workers until graceful shutdown (or ``requestStop()``): starts a worker in
  /// every slot that needs one, stops retired ones; then waits for the renders in flight and
  /// stops every worker.
  func run() async throws {
    await withDiscardingTaskGroup { group in
      await withGracefulShutdownHandler {
        supervising: for await event in events {
          switch event {
          case .fill(let index): group.addTask { await self.fill(index) }
          case .retire(let worker):
            group.addTask {
              let ending = await worker.stop(grace: .seconds(2), clock: self.clock)
              self.logger.debug(
                "render worker retired", metadata: ["pid": .stringConvertible(worker.pid), "ending": "\(ending)"])
            }
          case .stop: break supervising
          }
        }
      } onGracefulShutdown: {
        self.requestStop()
      }
      // Start-ups backing off or under way end now.
      group.cancelAll()
    }
    await withCheckedContinuation { continuation in
      let now = state.withLockedValue { state -> Bool in
        guard state.busy > 0 else { return true }
        state.drained = continuation
        return false
      }
      if now { continuation.resume() }
    }
    let workers = state.withLockedValue { state -> [WorkerConnection] in
      defer {
        state.slots = state.slots.map { _ in .empty }
        state.successors = [:]
      }
      return state.slots.compactMap { if case .idle(let worker) = $0 { worker } else { nil } }
        + state.successors.values
    }
    await withDiscardingTaskGroup { group in
      for worker in workers {
        group.addTask {
          let ending = await worker.stop(grace: .seconds(2), clock: self.clock)
          self.logger.debug(
            "render worker stopped", metadata: ["pid": .stringConvertible(worker.pid), "ending": "\(ending)"])
        }
      }
    }
    state.withLockedValue { publishRunning(&$0) }
  }

  /// Stops taking renders (those waiting get none) and has ``run()`` stop the workers once the
  /// renders in flight are back.
  func requestStop() {
    let waiters = state.withLockedValue { state -> [CheckedContinuation<Lease?, Never>] in
      state.stopping = true
      defer { state.line = [] }
      return state.line.compactMap(\.continuation)
    }
    for waiter in waiters { waiter.resume(returning: nil) }
    eventSink.yield(.stop)
    eventSink.finish()
  }

  /// Starts a worker in an empty slot, after the back-off of earlier failures, until one starts
  /// or the pool stops.
  private func fill(_ index: Int) async {
    while true {
      let plan = state.withLockedValue { state -> (Duration, WorkerLaunch, Int)? in
        guard !state.stopping, !state.slots[index].isTaken else { return nil }
        state.slots[index] = .starting
        return (state.retryAt.map { clock.now.duration(to: $0) } ?? .zero, state.launch, state.launchGeneration)
      }
      guard let plan, !Task.isCancelled else { break }
      let (delay, launch, generation) = plan
      if delay > .zero {
        do { try await clock.sleep(for: delay) } catch { break }
      }
      switch await startWorker(launch) {
      case .success(let worker):
        // The pool stops, or replaced its workers meanwhile (this one has the old launch, and the
        // slot may be taken): this worker is not wanted.
        let unwanted = state.withLockedValue { state in
          state.stopping || state.launchGeneration != generation || state.slots[index].isTaken
        }
        if unwanted {
          _ = await worker.stop(grace: .seconds(2), clock: clock)
          continue
        }
        place(worker, in: index)
        return
      case .failure(let failure):
        let (waiters, delay) = state.withLockedValue { state -> (Wakeups, Duration?) in
          guard !state.slots[index].isTaken else { return ([], nil) }
          state.slots[index] = .empty
          guard !state.stopping else { return ([], nil) }
          state.startFailures += 1
          let delay = min(Duration.milliseconds(250) * (1 << min(state.startFailures - 1, 7)), .seconds(30))
          state.retryAt = clock.now.advanced(by: delay)
          failuresCounter.increment()
          publishRunning(&state)
          return (dispatch(&state), Optional(delay))
        }
        resume(waiters)
        guard let delay else { break }
        logger.error(
          "render worker failed to start; retrying",
          metadata: ["reason": .string(failure.description), "retry_in_s": "\(delay / .seconds(1))"])
      }
    }
    state.withLockedValue { state in
      if !state.slots[index].isTaken { state.slots[index] = .empty }
    }
  }

  // MARK: Renders

  /// Renders one request on a worker.
  func render(_ request: CardRequest) async -> RenderOutcome {
    // A worker found gone before it got the request (it died while idle, just now): the request
    // is safe to send once more, to another worker.
    let pixels = request.preset.geometry.canvas.width * request.preset.geometry.canvas.height
    for attempt in 1...2 {
      guard let lease = await take(pixels: pixels) else {
        return .unavailable(retryAfterSeconds: retryAfterSeconds())
      }
      do throws(WorkerFailure) {
        let result = try await lease.worker.render(
          request, encoderThreads: Self.encoderThreads(rendersInFlight: lease.rendersInFlight, cores: cores),
          timeout: renderTimeout, clock: clock)
        if let restingLimitBytes, lease.worker.restingBytes > restingLimitBytes {
          retire(lease)
        } else {
          giveBack(lease, keepingWorker: true)
        }
        switch result {
        case .success(let card): return .card(card)
        case .failure(let error): return .failed(error)
        }
      } catch {
        giveBack(lease, keepingWorker: false)
        if error.requestUnsent && attempt == 1 {
          logger.warning("render worker lost before a request", metadata: ["reason": .string(error.description)])
          continue
        }
        return .failed(.renderFailed(reason: "render \(error.description)"))
      }
    }
    return .failed(.renderFailed(reason: "render workers lost twice before a request"))
  }

  /// How many threads encode a PNG card when `rendersInFlight` renders (this one among them) are
  /// under way on `cores` processors: two while each render can have two cores to itself, else
  /// one. Under load every core already renders a card, and a second thread per card would only
  /// add its start and its share of the caches (the uncached rate fell by 1 to 8 % with two threads
  /// always, BENCHMARKS.md).
  static func encoderThreads(rendersInFlight: Int, cores: Int) -> Int {
    rendersInFlight * 2 <= cores ? 2 : 1
  }

  /// An idle worker, marked busy, once this render's turn has come and its pixels fit the budget;
  /// or `nil` when none can be had: the pool is stopping, no worker is running while start-ups
  /// fail, or none came within the start-up timeout.
  private func take(pixels: Int) async -> Lease? {
    let (turn, others) = state.withLockedValue { state -> (Turn, Wakeups) in
      let ticket = state.nextTicket
      state.nextTicket += 1
      state.line.append(Waiter(ticket: ticket, pixels: pixels))
      let others = dispatch(&state)
      if let lease = state.granted.removeValue(forKey: ticket) { return (.now(lease), others) }
      guard state.line.contains(where: { $0.ticket == ticket }) else { return (.now(nil), others) }
      return (.later(ticket: ticket), others)
    }
    resume(others)
    // Granted or refused at once: the usual case is an idle worker and nobody waiting.
    guard case .later(let ticket) = turn else {
      if case .now(let lease) = turn { return lease }
      return nil
    }
    return await withTaskGroup(of: Lease?.self) { group in
      group.addTask {
        await withCheckedContinuation { continuation in
          let now = self.state.withLockedValue { state -> Lease?? in
            if let lease = state.granted.removeValue(forKey: ticket) { return .some(lease) }
            guard let index = state.line.firstIndex(where: { $0.ticket == ticket }) else { return .some(nil) }
            state.line[index].continuation = continuation
            return nil
          }
          if let now { continuation.resume(returning: now) }
        }
      }
      group.addTask {
        try? await self.clock.sleep(for: self.startTimeout)
        let waiter = self.state.withLockedValue { state -> CheckedContinuation<Lease?, Never>? in
          guard let index = state.line.firstIndex(where: { $0.ticket == ticket }) else { return nil }
          return state.line.remove(at: index).continuation
        }
        waiter?.resume(returning: nil)
        return nil
      }
      var lease: Lease?
      for await result in group {
        if let result {
          lease = result
          group.cancelAll()
        }
      }
      return lease
    }
  }

  /// Hands idle workers to the first renders in line while their pixels fit the budget; refuses
  /// everyone waiting when no worker runs and start-ups fail. Returns the waiters to resume
  /// (outside the lock).
  private func dispatch(_ state: inout State) -> Wakeups {
    var resumed: Wakeups = []
    if state.stopping || (state.startFailures > 0 && state.running == 0) {
      for waiter in state.line {
        if let continuation = waiter.continuation { resumed.append((continuation, nil)) }
      }
      state.line = []
      return resumed
    }
    while let first = state.line.first,
      state.pixelsInFlight == 0 || state.pixelsInFlight + first.pixels <= pixelBudget,
      let index = state.slots.firstIndex(where: { if case .idle = $0 { true } else { false } }),
      case .idle(let worker) = state.slots[index]
    {
      state.line.removeFirst()
      state.slots[index] = .busy(worker)
      state.pixelsInFlight += first.pixels
      let lease = Lease(slot: index, worker: worker, pixels: first.pixels, rendersInFlight: state.busy)
      if let continuation = first.continuation {
        resumed.append((continuation, lease))
      } else {
        state.granted[first.ticket] = lease
      }
    }
    return resumed
  }

  private func resume(_ waiters: Wakeups) {
    for (continuation, lease) in waiters { continuation.resume(returning: lease) }
  }

  /// Returns a slot: with its worker, or empty for the supervisor to fill (the worker failed).
  private func giveBack(_ lease: Lease, keepingWorker: Bool) {
    let (waiters, drained) = state.withLockedValue { state in
      state.pixelsInFlight -= lease.pixels
      if !state.stopping, let successor = state.successors.removeValue(forKey: lease.slot) {
        // Replaced while it rendered (a reload): its successor takes the slot.
        state.slots[lease.slot] = .idle(successor)
        if keepingWorker {
          eventSink.yield(.retire(lease.worker))
        } else {
          failuresCounter.increment()
        }
      } else if keepingWorker {
        state.slots[lease.slot] = .idle(lease.worker)
      } else {
        state.slots[lease.slot] = .empty
        failuresCounter.increment()
        eventSink.yield(.fill(lease.slot))
      }
      publishRunning(&state)
      return (dispatch(&state), state.busy == 0 ? state.drained.take() : nil)
    }
    resume(waiters)
    drained?.resume()
  }

  /// Empties a slot whose worker holds too much memory at rest: the supervisor stops the worker
  /// and starts another in its place.
  private func retire(_ lease: Lease) {
    let (waiters, drained) = state.withLockedValue { state in
      state.pixelsInFlight -= lease.pixels
      guard !state.stopping else {
        // The supervisor stops it with the others.
        state.slots[lease.slot] = .idle(lease.worker)
        return (dispatch(&state), state.busy == 0 ? state.drained.take() : nil)
      }
      retirementsCounter.increment()
      eventSink.yield(.retire(lease.worker))
      if let successor = state.successors.removeValue(forKey: lease.slot) {
        state.slots[lease.slot] = .idle(successor)
      } else {
        state.slots[lease.slot] = .empty
        eventSink.yield(.fill(lease.slot))
      }
      publishRunning(&state)
      return (dispatch(&state), state.busy == 0 ? state.drained.take() : nil)
    }
    resume(waiters)
    drained?.resume()
    logger.info(
      "render worker replaced: it held more memory at rest than --worker-memory-mb",
      metadata: [
        "pid": .stringConvertible(lease.worker.pid),
        "resting_mib": .stringConvertible(lease.worker.restingBytes >> 20),
      ])
  }

  private func retryAfterSeconds() -> Int {
    guard let retryAt = state.withLockedValue({ $0.retryAt }) else { return 1 }
    let seconds = clock.now.duration(to: retryAt) / .seconds(1)
    return max(1, Int(seconds.rounded(.up)))
  }
}

/// How one render ended, wherever it ran.
enum RenderOutcome: Sendable {
  case card(FinishedCard)
  case failed(InnerPeaceError)
  /// No worker can take it now (they keep failing to start): answer 503 with this Retry-After.
  case unavailable(retryAfterSeconds: Int)
}
