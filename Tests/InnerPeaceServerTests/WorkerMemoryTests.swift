import Foundation
import InnerPeace
import Logging
import Prometheus
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// The worker pool on real worker processes of the debug build, its deadlines on a clock the test
/// moves: a worker holding more than its limit at rest is replaced after its render, the cards
/// rendering at once stay within the pixel budget, a render past its deadline is killed, and a
/// worker that dies while idle is replaced.
@Suite(.serialized, .tags(.process, .binary)) struct WorkerMemoryTests {
  static let hang = "memory-test-hang"
  static let renderTimeout = Duration.seconds(5)

  static func pool<C: Clock<Duration>>(
    count: Int, restingLimitBytes: Int?, pixelBudget: Int, clock: C, environment: [String: String] = [:]
  ) throws -> (WorkerPool<C>, PrometheusCollectorRegistry) {
    let binary = try ServerProcess.binary()
    let launch = WorkerLaunch(
      executable: binary.path, arguments: [binary.path, "render-worker", "--background-cache-mb", "0"],
      environment: ["INNERPEACE_FAULT_HANG_TEXT": hang].merging(environment) { $1 })
    let registry = PrometheusCollectorRegistry()
    let pool = WorkerPool(
      count: count, launch: launch, renderTimeout: renderTimeout, restingLimitBytes: restingLimitBytes,
      pixelBudget: pixelBudget, clock: clock, registry: registry, logger: Logger(label: "test"))
    return (pool, registry)
  }

  static func metric(_ registry: PrometheusCollectorRegistry, _ name: String) -> Double? {
    var buffer: [UInt8] = []
    registry.emit(into: &buffer)
    return metricValue(String(decoding: buffer, as: UTF8.self), name)
  }

  /// Runs `body` with the pool started and supervised, then stops it.
  static func withRunningPool<C: Clock<Duration>>(
    _ pool: WorkerPool<C>, _ body: () async throws -> Void
  ) async throws {
    try await pool.start()
    let supervisor = Task { try await pool.run() }
    do {
      try await body()
    } catch {
      pool.requestStop()
      _ = await supervisor.result
      throw error
    }
    pool.requestStop()
    try await supervisor.value
  }

  /// With a limit every worker exceeds, each render still succeeds, and then its worker is
  /// replaced (not counted as a failure); with no limit the same worker serves every render.
  @Test(.timeLimit(.minutes(2)))
  func workerOverItsMemoryIsReplacedAfterItsRender() async throws {
    let (pool, registry) = try Self.pool(count: 1, restingLimitBytes: 1, pixelBudget: .max, clock: ContinuousClock())
    try await Self.withRunningPool(pool) {
      for index in 0..<3 {
        let outcome = await pool.render(CardRequest(quote: .text("retire \(index)", author: nil), seed: 1))
        guard case .card(let card) = outcome else {
          Issue.record("render \(index): \(outcome)")
          continue
        }
        #expect(card.facts.format == .png && imageDimensions(card.bytes).map { $0.width == 1200 } == true)
      }
    }
    // Each worker reported its memory before its render, over 1 byte: each served one card.
    #expect(Self.metric(registry, "innerpeace_render_worker_retirements_total") == 3)
    #expect(Self.metric(registry, "innerpeace_render_worker_failures_total") == 0)

    let (steady, steadyRegistry) = try Self.pool(
      count: 1, restingLimitBytes: nil, pixelBudget: .max, clock: ContinuousClock())
    try await Self.withRunningPool(steady) {
      let first = steady.pids
      for index in 0..<3 {
        guard case .card = await steady.render(CardRequest(quote: .text("keep \(index)", author: nil), seed: 1)) else {
          Issue.record("render \(index) failed")
          continue
        }
      }
      #expect(steady.pids == first, "the same worker served every render")
    }
    #expect(Self.metric(steadyRegistry, "innerpeace_render_worker_retirements_total") == 0)
  }

  /// A worker keeps a card's freed buffers for the next card (``WorkerHeap``): the third render of
  /// the same og card (its photo already in the background cache) faults in fewer pages than half
  /// the card's canvas alone (369), where unmapping every large buffer after each card faulted in
  /// 1,236 here (and 2,228 for the bench's warm og card in a release build). Its memory at rest
  /// leaves the kept free heap out: under the server's default limit, the same worker serves
  /// every card.
  @Test(.timeLimit(.minutes(2)))
  func workerKeepsItsHeapBetweenCards() async throws {
    let binary = try ServerProcess.binary()
    let launch = WorkerLaunch(executable: binary.path, arguments: [binary.path, "render-worker"])
    let registry = PrometheusCollectorRegistry()
    let pool = WorkerPool(
      count: 1, launch: launch, renderTimeout: Self.renderTimeout,
      restingLimitBytes: ServerConfiguration().workerMemoryMegabytes << 20, pixelBudget: .max,
      clock: ContinuousClock(), registry: registry, logger: Logger(label: "test"))
    try await Self.withRunningPool(pool) {
      let request = CardRequest(quote: .text("the same card again", author: nil), seed: 3)
      var faults: [Int] = []
      for index in 0..<3 {
        let pid = try #require(pool.pids[0])
        let before = try #require(minorFaults(pid))
        guard case .card(let card) = await pool.render(request) else {
          Issue.record("render \(index) failed")
          return
        }
        #expect(imageDimensions(card.bytes).map { $0.width == 1200 && $0.height == 630 } == true)
        faults.append(try #require(minorFaults(pid)) - before)
      }
      let canvasPages = 1200 * 630 * 4 / 4096
      #expect(faults[2] < canvasPages / 2, "page faults per render: \(faults)")
    }
    #expect(Self.metric(registry, "innerpeace_render_worker_retirements_total") == 0)
  }

  /// A real worker leaves its cards in its body file: its descriptor 3 is the server's memfd, which
  /// holds the card's bytes after each render (a smaller card after a larger one too).
  @Test(.timeLimit(.minutes(2)))
  func workerLeavesItsCardsInTheBodyFile() async throws {
    let (pool, _) = try Self.pool(count: 1, restingLimitBytes: nil, pixelBudget: .max, clock: ContinuousClock())
    try await Self.withRunningPool(pool) {
      let pid = try #require(pool.pids[0])
      let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3")
      #expect(target.hasPrefix("/memfd:innerpeace-card"), "descriptor 3 is \(target)")
      for (index, preset) in [Preset.og, .square].enumerated() {
        guard case .card(let card) = await pool.render(CardRequest(preset: preset, quote: .index(index), seed: 4))
        else {
          Issue.record("render \(index) failed")
          return
        }
        let held = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/fd/3"))
        #expect(held.count >= card.bytes.count && Array(held.prefix(card.bytes.count)) == card.bytes)
        #expect(imageDimensions(card.bytes).map { $0.width == preset.size.width } == true)
      }
    }
  }

  /// The reserve's rule: free heap up to the reserve is kept, more is returned; memory at rest is
  /// the private resident bytes less what is kept, never below zero.
  @Test func heapReserveRule() {
    #expect(WorkerHeap.keeps(freeBytes: WorkerHeap.reserveBytes))
    #expect(!WorkerHeap.keeps(freeBytes: WorkerHeap.reserveBytes + 1))
    #expect(WorkerHeap.restingBytes(privateResident: 50 << 20, keptFree: 12 << 20) == 38 << 20)
    #expect(WorkerHeap.restingBytes(privateResident: 50 << 20, keptFree: 0) == 50 << 20)
    #expect(WorkerHeap.restingBytes(privateResident: 1 << 20, keptFree: 2 << 20) == 0)
  }

  /// Two og cards that hang in their workers, on two workers: within a budget of one og card the
  /// second waits in line while the first renders (and gets a worker only when the first is
  /// killed at its deadline); with room for both, both render at once. The deadlines pass when the
  /// test moves the clock, and each render ends with the deadline's 500.
  @Test(.timeLimit(.minutes(2)))
  func pixelBudgetSerialisesLargeRendersAndDeadlinesKill() async throws {
    let og = 1200 * 630
    for (budget, serial) in [(og, true), (2 * og, false)] {
      let clock = ManualClock()
      let (pool, registry) = try Self.pool(count: 2, restingLimitBytes: nil, pixelBudget: budget, clock: clock)
      try await Self.withRunningPool(pool) {
        let start = clock.now
        let first = Task { await pool.render(CardRequest(quote: .text(Self.hang, author: nil), seed: 1)) }
        // The first render is on a worker (its deadline is set) before the second asks.
        await clock.waitForSleeper(until: start.advanced(by: Self.renderTimeout))
        let second = Task { await pool.render(CardRequest(quote: .text(Self.hang, author: nil), seed: 2)) }
        if serial {
          // The second waits for a worker (up to the start-up timeout) though one is idle.
          await clock.waitForSleeper(until: start.advanced(by: pool.startTimeout))
          #expect(pool.counts == (busy: 1, waiting: 1), "budget \(budget): \(pool.counts)")
          clock.advance(by: Self.renderTimeout)
          Self.expectDeadline(await first.value)
          // Now the second renders, with its own deadline.
          await clock.waitForSleeper(until: start.advanced(by: Self.renderTimeout * 2))
          #expect(pool.counts.busy == 1, "budget \(budget): \(pool.counts)")
          clock.advance(by: Self.renderTimeout)
          Self.expectDeadline(await second.value)
        } else {
          await clock.waitForSleeper(until: start.advanced(by: Self.renderTimeout), count: 2)
          #expect(pool.counts == (busy: 2, waiting: 0), "budget \(budget): \(pool.counts)")
          clock.advance(by: Self.renderTimeout)
          Self.expectDeadline(await first.value)
          Self.expectDeadline(await second.value)
        }
      }
      #expect(Self.metric(registry, "innerpeace_render_worker_failures_total") == 2)
    }
  }

  /// A render whose waiting task is cancelled ends as at its deadline, without the clock moving:
  /// the worker that holds it is killed and replaced, and the render returns.
  @Test(.timeLimit(.minutes(2)))
  func cancelledRenderEndsAsAtItsDeadline() async throws {
    let clock = ManualClock()
    let (pool, registry) = try Self.pool(count: 1, restingLimitBytes: nil, pixelBudget: .max, clock: clock)
    try await Self.withRunningPool(pool) {
      let start = clock.now
      let render = Task { await pool.render(CardRequest(quote: .text(Self.hang, author: nil), seed: 1)) }
      // The render is on the worker (its deadline is set) before it is cancelled.
      await clock.waitForSleeper(until: start.advanced(by: Self.renderTimeout))
      render.cancel()
      Self.expectDeadline(await render.value)
      #expect(clock.now == start)
    }
    #expect(Self.metric(registry, "innerpeace_render_worker_failures_total") == 1)
  }

  static func expectDeadline(_ outcome: RenderOutcome, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .failed(.renderFailed(let reason)) = outcome else {
      Issue.record("not a failed render: \(outcome)", sourceLocation: sourceLocation)
      return
    }
    #expect(reason.contains("gave no answer before the deadline"), "\(reason)", sourceLocation: sourceLocation)
  }

  /// A worker killed while idle is seen without any request: the workers gauge drops (and stays
  /// down while its replacement cannot start, backing off on the test's clock), the failures are
  /// counted, the dead worker is reaped, and once a worker can start the gauge is back to two.
  @Test(.timeLimit(.minutes(5)))
  func idleWorkerDeathIsSeenWithoutARequest() async throws {
    let flag = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-no-start-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: flag) }
    let clock = ManualClock()
    let (pool, registry) = try Self.pool(
      count: 2, restingLimitBytes: nil, pixelBudget: .max, clock: clock,
      environment: ["INNERPEACE_FAULT_START_FILE": flag.path])
    try await Self.withRunningPool(pool) {
      #expect(Self.metric(registry, "innerpeace_render_workers") == 2)
      let victim = try #require(pool.pids[0])
      _ = FileManager.default.createFile(atPath: flag.path, contents: Data())
      #expect(kill(victim, SIGKILL) == 0)
      // Its replacement failed to start and backs off 0.25 s on the test's clock.
      let backOff = Duration.milliseconds(250)
      await clock.waitForSleeper(until: clock.now.advanced(by: backOff))
      if Task.isCancelled {
        Issue.record("no back-off within the time limit: \(pool.counts), workers \(pool.pids); \(childProcessReport())")
      }
      #expect(Self.metric(registry, "innerpeace_render_workers") == 1)
      #expect(Self.metric(registry, "innerpeace_render_worker_failures_total") == 2, "the death and one start-up")
      #expect(processStat(victim) == nil, "reaped: \(String(describing: processStat(victim)))")
      try FileManager.default.removeItem(at: flag)
      clock.advance(by: backOff)
      // The supervisor starts one at once (the test's time limit is the hang guard).
      await pool.waitUntilRunning(2)
      if Task.isCancelled { Issue.record("no replacement within the time limit; \(childProcessReport())") }
      #expect(Self.metric(registry, "innerpeace_render_workers") == 2)
      #expect(pool.pids.allSatisfy { $0 != nil && $0 != victim })
    }
  }
}

/// The minor page faults process `pid` has taken so far (field 10 of `/proc/PID/stat`).
func minorFaults(_ pid: pid_t) -> Int? {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = text.lastIndex(of: ")")
  else { return nil }
  let fields = text[text.index(after: close)...].split(separator: " ")
  return fields.count > 7 ? Int(fields[7]) : nil
}
