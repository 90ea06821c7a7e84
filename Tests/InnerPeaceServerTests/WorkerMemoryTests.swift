import Foundation
import InnerPeace
import Logging
import Prometheus
import Testing

@testable import InnerPeaceServer

/// The worker pool's memory rules, on real worker processes of the debug build: a worker holding
/// more than its limit at rest is replaced after its render, and the cards rendering at once stay
/// within the pixel budget.
@Suite(.serialized, .tags(.process, .binary)) struct WorkerMemoryTests {
  static let slow = "memory-test-slow"

  static func pool(count: Int, restingLimitBytes: Int?, pixelBudget: Int) throws -> (
    WorkerPool, PrometheusCollectorRegistry
  ) {
    let binary = try ServerProcess.binary()
    let launch = WorkerLaunch(
      executable: binary.path, arguments: [binary.path, "render-worker", "--background-cache-mb", "0"],
      environment: ["INNERPEACE_FAULT_SLOW_TEXT": slow])
    let registry = PrometheusCollectorRegistry()
    let pool = WorkerPool(
      count: count, launch: launch, renderTimeout: .seconds(60), restingLimitBytes: restingLimitBytes,
      pixelBudget: pixelBudget, registry: registry, logger: Logger(label: "test"))
    try pool.waitUntilReady()
    return (pool, registry)
  }

  static func metric(_ registry: PrometheusCollectorRegistry, _ name: String) -> Double? {
    var buffer: [UInt8] = []
    registry.emit(into: &buffer)
    return metricValue(String(decoding: buffer, as: UTF8.self), name)
  }

  /// With a limit every worker exceeds, each render still succeeds, and then its worker is
  /// replaced (not counted as a failure); with no limit the same worker serves every render.
  @Test(.timeLimit(.minutes(2)))
  func workerOverItsMemoryIsReplacedAfterItsRender() async throws {
    let (pool, registry) = try Self.pool(count: 1, restingLimitBytes: 1, pixelBudget: .max)
    for index in 0..<3 {
      let outcome = pool.render(CardRequest(quote: .text("retire \(index)", author: nil), seed: 1))
      guard case .card(let card) = outcome else {
        Issue.record("render \(index): \(outcome)")
        continue
      }
      #expect(card.size.width == 1200)
    }
    // Each worker reported its memory before its render, over 1 byte: each served one card.
    #expect(Self.metric(registry, "innerpeace_render_worker_retirements_total") == 3)
    #expect(Self.metric(registry, "innerpeace_render_worker_failures_total") == 0)
    await pool.shutdown()

    let (steady, steadyRegistry) = try Self.pool(count: 1, restingLimitBytes: nil, pixelBudget: .max)
    for index in 0..<3 {
      guard case .card = steady.render(CardRequest(quote: .text("keep \(index)", author: nil), seed: 1)) else {
        Issue.record("render \(index) failed")
        continue
      }
    }
    #expect(Self.metric(steadyRegistry, "innerpeace_render_worker_retirements_total") == 0)
    await steady.shutdown()
  }

  /// Two slow og cards (each sleeps 2 s in its worker) on two workers: within a budget of one og
  /// card they run one after the other (4 s at least); with room for both, side by side.
  @Test(.timeLimit(.minutes(2)))
  func pixelBudgetSerialisesLargeRenders() async throws {
    let og = 1200 * 630
    for (budget, serial) in [(og, true), (2 * og, false)] {
      let (pool, _) = try Self.pool(count: 2, restingLimitBytes: nil, pixelBudget: budget)
      let started = ContinuousClock.now
      async let first = onOwnThread { pool.render(CardRequest(quote: .text(Self.slow, author: nil), seed: 1)) }
      async let second = onOwnThread { pool.render(CardRequest(quote: .text(Self.slow, author: nil), seed: 2)) }
      let outcomes = try await [first, second]
      let elapsed = ContinuousClock.now - started
      for outcome in outcomes {
        guard case .card = outcome else {
          Issue.record("budget \(budget): \(outcome)")
          continue
        }
      }
      if serial {
        #expect(elapsed >= .seconds(4), "within one card's budget the renders overlapped: \(elapsed)")
      } else {
        #expect(elapsed < .seconds(4), "with room for both the renders did not overlap: \(elapsed)")
      }
      await pool.shutdown()
    }
  }
}
