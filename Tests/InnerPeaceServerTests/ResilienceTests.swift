import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
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

  /// One render slot and no queue: of several different uncached cards asked for at once, the
  /// ones that find the slot taken get a 503 with Retry-After and a JSON body within 50 ms (they
  /// never wait for the slot); the server stays up and serves a new request afterwards.
  ///
  /// The 50 ms is measured in the test process, where other tests share the two threads of the
  /// concurrency pool; a burst whose 503s were slow is tried again (up to 3 bursts) so that a
  /// moment of contention is not taken for queueing. A 503 that waited for the slot would take
  /// about a second every time.
  @Test func overloadAnswers503Fast() async throws {
    var configuration = testConfiguration(concurrency: 1, queueDepth: 0)
    configuration.retryAfterSeconds = 2
    let renderer = SlowRenderer(base: try realRenderer(), delay: 1)
    try await withRouter(renderer: renderer, configuration: configuration) { client, _ in
      var refusedTotal = 0
      var refusedQuotes: [Int] = []
      var slow: [Duration] = []
      for burst in 0..<3 {
        let quotes = Array((10 + burst * 5)..<(15 + burst * 5))
        let replies = try await withThrowingTaskGroup(of: (Int, Reply).self) { group in
          for quote in quotes {
            group.addTask { (quote, try await client.get("/cards/\(quote).png?w=200&h=200")) }
          }
          return try await group.reduce(into: [(Int, Reply)]()) { $0.append($1) }
        }
        let refused = replies.filter { $0.1.status == 503 }
        let served = replies.filter { $0.1.status == 200 }
        #expect(refused.count >= 1, "no 503 for \(quotes.count) renders on one slot: \(replies.map(\.1.status))")
        #expect(served.count >= 1, "the render that got the slot must succeed: \(replies.map(\.1.status))")
        #expect(refused.count + served.count == quotes.count, "\(replies.map(\.1.status))")
        for (quote, reply) in refused {
          expectError(reply, status: 503)
          #expect(reply.header("Retry-After") == "2", "quote \(quote): \(reply)")
        }
        for (_, reply) in served {
          expectCard(reply, format: "png", size: (200, 200))
          #expect(reply.elapsed >= .milliseconds(900))
        }
        refusedTotal += refused.count
        refusedQuotes += refused.map(\.0)
        slow = refused.map(\.1.elapsed).filter { $0 >= .milliseconds(50) }
        if slow.isEmpty { break }
      }
      #expect(slow.isEmpty, "503s took \(slow) (over 50 ms) in 3 bursts out of 3")

      let text = try await metrics(client)
      #expect(metricValue(text, "innerpeace_requests_rejected_total") == Double(refusedTotal))
      #expect(metricValue(text, "innerpeace_renders_in_flight") == 0)

      // The slot is free again: a card that was refused now renders.
      let retried = try #require(refusedQuotes.first)
      let after = try await client.get("/cards/\(retried).png?w=200&h=200")
      expectCard(after, format: "png", size: (200, 200))
    }
  }
}
