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

/// Readiness follows the render workers ready: none running (every worker down) is 503 "no
/// render worker is running", one back is ready. (A version of this on real worker processes and
/// the ManualClock hung when run beside the whole server suite; see the report of issue 20.)
@Suite struct WorkerReadinessTests {
  @Test func everyWorkerDownIsNotReadyUntilOneIsBack() {
    let down = Readiness(readyWorkers: 0, quotes: 1, contentVersion: "x")
    #expect(!down.isReady && down.status == "unavailable" && down.reason == Readiness.noWorker, "\(down)")
    let back = Readiness(readyWorkers: 1, quotes: 1, contentVersion: "x")
    #expect(back.isReady && back.status == "ready" && back.reason == nil && back.workers == 1)
    let starting = Readiness(readyWorkers: nil, quotes: 1, contentVersion: "x")
    #expect(starting.reason == Readiness.starting && starting.workers == 0)
  }
}
