import Foundation
import Hummingbird
import HummingbirdTesting
import InnerPeace
import ServiceLifecycleTestKit
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// `/readyz`: 200 only once the catalog is loaded and a render worker is ready; 503 with the
/// reason while starting, while every worker is down, and while draining. `/healthz` stays 200.
@Suite struct ReadinessTests {
  /// Before the render pool has started, `/readyz` is 503 "starting" (and `/healthz` 200); once it
  /// has, 200 with the workers, the quotes and the content version; never cached.
  @Test func startingThenReady() async throws {
    let service = CardService(renderer: try realRenderer(), configuration: testConfiguration(concurrency: 2))
    let app = Application(router: buildRouter(service: service), logger: quietLogger)
    try await app.test(.router) { client in
      let starting = try await client.get("/readyz")
      #expect(starting.status == 503, "\(starting)")
      #expect(starting.header("Cache-Control") == "no-store")
      let object = try #require(starting.json as? [String: Any], "\(starting)")
      #expect(object["status"] as? String == "unavailable")
      #expect(object["reason"] as? String == "starting")
      #expect(try await client.get("/healthz").status == 200, "liveness does not wait for the workers")

      try await service.startRenderers()
      let ready = try await client.get("/readyz")
      #expect(ready.status == 200, "\(ready)")
      #expect(ready.header("Cache-Control") == "no-store")
      let body = try #require(ready.json as? [String: Any], "\(ready)")
      #expect(body["status"] as? String == "ready")
      #expect(body["reason"] == nil)
      #expect(body["workers"] as? Int == 2)
      #expect(body["quotes"] as? Int == service.catalog.quotes.count)
      #expect(body["contentVersion"] as? String == service.contentVersion)
      let head = try await client.request("/readyz", method: .head)
      #expect(head.status == 200 && head.body.isEmpty)
    }
    try await service.shutdown()
  }

  /// During graceful shutdown (SIGTERM: the server's requests run in tasks that are shutting
  /// down gracefully while it drains) `/readyz` is 503 "draining"; `/healthz` stays 200.
  @Test func drainingIsNotReady() async throws {
    try await withRouter { client, _ in
      #expect(try await client.get("/readyz").status == 200)
      try await testGracefulShutdown { trigger in
        #expect(try await client.get("/readyz").status == 200, "not yet shutting down")
        trigger.triggerGracefulShutdown()
        let draining = try await client.get("/readyz")
        #expect(draining.status == 503, "\(draining)")
        #expect((draining.json as? [String: Any])?["reason"] as? String == "draining")
        #expect(try await client.get("/healthz").status == 200)
      }
    }
  }
}

/// Readiness follows the worker processes, on the pool's clock that the test moves: every worker
/// down (one killed, its replacement unable to start) → 503 "no render worker is running"; one
/// back → ready.
@Suite(.serialized, .tags(.process, .binary)) struct WorkerReadinessTests {
  @Test(.timeLimit(.minutes(1)))
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
      #expect(readiness().isReady)
    }
  }
}
