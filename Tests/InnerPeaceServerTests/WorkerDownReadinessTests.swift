import Foundation
import InnerPeace
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// Readiness follows the worker processes, on the pool's clock that the test moves: every worker
/// down (one killed, its replacement unable to start) → 503 "no render worker is running"; one
/// back → ready. (This test hung beside the whole suite until a request written to a worker's
/// already-closed channel failed its answer: `WorkerWireTests.requestToAClosedChannelFailsAtOnce`.)
@Suite(.serialized, .tags(.process, .binary)) struct WorkerDownReadinessTests {
  @Test(.timeLimit(.minutes(5)))
  func everyWorkerDownIsNotReadyUntilOneIsBack() async throws {
    let flag = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-no-start-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: flag) }
    let clock = ManualClock()
    let (pool, _) = try WorkerMemoryTests.pool(
      count: 1, restingLimitBytes: nil, pixelBudget: .max, clock: clock,
      environment: ["INNERPEACE_FAULT_START_FILE": flag.path])
    func readiness() -> Readiness { Readiness(readyWorkers: pool.runningCount, quotes: 1, contentVersion: "x") }
    try await WorkerMemoryTests.withRunningPool(pool) {
      #expect(readiness().isReady && readiness().workers == 1)
      let victim = try #require(pool.pids[0])
      _ = FileManager.default.createFile(atPath: flag.path, contents: Data())
      #expect(kill(victim, SIGKILL) == 0)
      // Its replacement failed to start and backs off 0.25 s on the test's clock.
      let backOff = Duration.milliseconds(250)
      await clock.waitForSleeper(until: clock.now.advanced(by: backOff))
      let down = readiness()
      #expect(!down.isReady && down.status == "unavailable" && down.reason == Readiness.noWorker, "\(down)")
      try FileManager.default.removeItem(at: flag)
      clock.advance(by: backOff)
      await pool.waitUntilRunning(1)
      if Task.isCancelled { Issue.record("no worker back within the time limit; \(childProcessReport())") }
      #expect(readiness().isReady)
    }
  }
}
