import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import NIOConcurrencyHelpers
import Testing

/// Failures and load: a failed render, an empty render, identical requests at once, more work
/// than the pool takes.
@Suite struct ResilienceTests {
  /// A render failure is a 500 with a public message (no reason, no path), is not cached, and
  /// the server keeps rendering.
  @Test func renderFailureIsAPublic500() async throws {
    try await withRouter(renderer: FailOnceRenderer(base: try realRenderer())) { client, _ in
      let failed = try await client.get("/cards/1.png?w=200&h=200")
      expectError(failed, status: 500)
      for secret in ["/secret/path", "secret", "cairo", "exploded", "renderFailed"] {
        #expect(!failed.text.contains(secret), "the 500 leaks '\(secret)': \(failed.text)")
      }
      #expect(failed.header("Cache-Control") == "no-store")

      let next = try await client.get("/cards/2.png?w=200&h=200")
      expectCard(next, format: "png", size: (200, 200))
      // The failure was not cached: the same card now renders.
      let retried = try await client.get("/cards/1.png?w=200&h=200")
      expectCard(retried, format: "png", size: (200, 200))
    }
  }

  /// A renderer that returns no bytes must not turn into a 200 with an empty body.
  @Test func emptyRenderIsNeverA200() async throws {
    try await withRouter(renderer: EmptyBytesRenderer(base: try realRenderer())) { client, _ in
      for uri in ["/cards/1.png?w=200&h=200", "/random.png?w=200&h=200&seed=1", "/card.png?text=hi&w=200&h=200"] {
        let reply = try await client.get(uri)
        #expect(reply.status != 200 || reply.body.count > 0, "\(uri): a 200 with an empty body")
        expectError(reply, status: 500)
      }
    }
  }

  /// Identical requests that arrive together render once and all get the same bytes; the miss
  /// counter counts one render, not one per waiting request.
  @Test func identicalConcurrentRequestsRenderOnce() async throws {
    let renderer = CountingRenderer(base: try realRenderer(), delay: 0.3)
    try await withRouter(renderer: renderer) { client, _ in
      let count = 8
      let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
        for _ in 0..<count { group.addTask { try await client.get("/cards/4.png?w=260&h=200") } }
        return try await group.reduce(into: [Reply]()) { $0.append($1) }
      }
      #expect(replies.count == count)
      for reply in replies {
        expectCard(reply, format: "png", size: (260, 200))
        #expect(sameBytes(reply, replies[0]))
        #expect(reply.header("ETag") == replies[0].header("ETag"))
      }
      #expect(renderer.calls == 1, "\(count) identical requests rendered \(renderer.calls) times")
      let text = try await metrics(client)
      let misses = metricValue(text, "innerpeace_card_cache_misses_total") ?? -1
      let hits = metricValue(text, "innerpeace_card_cache_hits_total") ?? -1
      #expect(misses == 1, "one render must count one miss, not \(misses) (hits \(hits))")
    }
  }

  /// One render slot and no queue: while the slot's render is held in flight (it finishes only
  /// when the test lets it), every other uncached card gets a 503 with Retry-After and a JSON
  /// body: the 503s come while the slot is still taken, so none waited for it. Afterwards the
  /// held card is served, and a card that was refused now renders.
  @Test func overloadAnswers503WhileTheSlotIsHeld() async throws {
    var configuration = testConfiguration(concurrency: 1, queueDepth: 0)
    configuration.retryAfterSeconds = 2
    let renderer = HeldRenderer(base: try realRenderer())
    try await withRouter(renderer: renderer, configuration: configuration) { client, _ in
      // Also when the test fails: the service's shutdown waits for the render.
      defer { renderer.open() }
      let first = Task { try await client.get("/cards/10.png?w=200&h=200") }
      await renderer.waitForRenderToStart()
      for quote in 11..<15 {
        let reply = try await client.get("/cards/\(quote).png?w=200&h=200")
        expectError(reply, status: 503)
        #expect(reply.header("Retry-After") == "2", "quote \(quote): \(reply)")
      }
      let during = try await metrics(client)
      #expect(metricValue(during, "innerpeace_requests_rejected_total") == 4)
      #expect(metricValue(during, "innerpeace_renders_in_flight") == 1, "the held render is still in flight")

      renderer.open()
      expectCard(try await first.value, format: "png", size: (200, 200))
      let after = try await metrics(client)
      #expect(metricValue(after, "innerpeace_renders_in_flight") == 0)
      expectCard(try await client.get("/cards/11.png?w=200&h=200"), format: "png", size: (200, 200))
    }
  }
}

/// A renderer whose renders, while it is held, wait until the test opens it: a render in flight
/// for exactly as long as a test needs, without timing. Held from the start.
final class HeldRenderer: CardRendering {
  let base: CardRenderer
  private struct State {
    var held = true
    var waiting = 0
  }
  private let state = NIOLockedValueBox(State())
  private let gate = DispatchSemaphore(value: 0)
  private let heldStarts: AsyncStream<Void>
  private let heldStartsContinuation: AsyncStream<Void>.Continuation

  init(base: CardRenderer) {
    self.base = base
    (heldStarts, heldStartsContinuation) = AsyncStream.makeStream(of: Void.self)
  }

  var catalog: Catalog { base.catalog }

  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    let waits = state.withLockedValue { state -> Bool in
      if state.held { state.waiting += 1 }
      return state.held
    }
    if waits {
      heldStartsContinuation.yield()
      // The bound is a hang guard only: a test opens the renderer long before.
      _ = gate.wait(timeout: .now() + 300)
    }
    return try base.render(request)
  }

  /// Renders started from now on wait for ``open()``.
  func hold() { state.withLockedValue { $0.held = true } }

  /// Lets every waiting render go on, and renders from now on run at once.
  func open() {
    let waiting = state.withLockedValue { state -> Int in
      defer { state.waiting = 0 }
      state.held = false
      return state.waiting
    }
    for _ in 0..<waiting { gate.signal() }
  }

  /// Returns once a held render has started (one per call).
  func waitForRenderToStart() async {
    var starts = heldStarts.makeAsyncIterator()
    _ = await starts.next()
  }
}
