import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import Logging
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// Catalog reloads (SIGHUP): a valid catalog is served at once under a new content version, with
/// new caches, requests in flight keeping the old one; an invalid one leaves the old one served
/// and logs one line naming the problem.
@Suite struct ReloadTests {
  /// A quote appended to the catalog folder's quotes.json.
  static func appendQuote(_ text: String, to folder: URL) throws {
    let file = folder.appendingPathComponent("quotes.json")
    var quotes = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [[String: String]])
    quotes.append(["text": text, "author": "Reload Test"])
    try JSONSerialization.data(withJSONObject: quotes, options: [.prettyPrinted]).write(to: file)
  }

  /// A service on a copy of the bundled catalog (render threads), its reloader and its log lines.
  static func withReloadableService(
    _ body:
      @Sendable (any TestClientProtocol, CardService<CardRenderer>, CatalogReloader, URL, LogStore) async throws ->
      Void
  ) async throws {
    let (folder, _) = try PictureChangeTests.catalogFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var configuration = testConfiguration(cacheMegabytes: 16)
    configuration.catalogDirectory = folder.path
    // No decoded photos kept: a photo changed on disk is read (and noticed) at its next card.
    configuration.backgroundCacheMegabytes = 0
    let logs = LogStore()
    let logger = Logger(label: "reload-test") { _ in CapturingLogHandler(store: logs) }
    let service = CardService(
      renderer: try CatalogReloader.loadRenderer(configuration), configuration: configuration, logger: logger)
    try await service.startRenderers()
    let reloader = CatalogReloader(service: service, signals: nil)
    let app = Application(router: buildRouter(service: service), logger: quietLogger)
    do {
      try await app.test(.router) { client in try await body(client, service, reloader, folder, logs) }
    } catch {
      try? await service.shutdown()
      throw error
    }
    try await service.shutdown()
  }

  static func reloads(_ service: CardService<CardRenderer>, _ result: String) -> Double? {
    metricValue(
      String(decoding: service.metrics.exposition(), as: UTF8.self), "innerpeace_catalog_reloads_total",
      labels: ["result": result])
  }

  /// A valid reload: new requests get the new catalog (the new quote, a new content version in
  /// `/quotes`' image URLs, new ETags for the same card and the same page), while a request that
  /// started before it keeps the old one to its end; one "catalog reloaded" line, counted ok.
  @Test func validCatalogIsServedUnderANewVersion() async throws {
    try await Self.withReloadableService { client, service, reloader, folder, logs in
      let count = service.catalog.quotes.count
      let oldVersion = service.contentVersion
      let list = try await client.get("/quotes")
      let card = try await client.get("/cards/0.png?w=200&h=200")
      expectCard(card, format: "png")
      expectError(try await client.get("/quotes/\(count)"), status: 404)
      #expect(Self.reloads(service, "ok") == 0 && Self.reloads(service, "failed") == 0)

      try Self.appendQuote("Reloaded without a restart.", to: folder)
      // A request in flight across the reload: it sees the old catalog to its end.
      try await service.withCurrentGeneration {
        #expect(await reloader.reload())
        #expect(service.catalog.quotes.count == count)
        #expect(service.contentVersion == oldVersion)
      }
      #expect(service.catalog.quotes.count == count + 1)
      let newVersion = service.contentVersion
      #expect(newVersion != oldVersion)

      let added = try await client.get("/quotes/\(count)")
      #expect(added.status == 200, "\(added)")
      #expect((added.json as? [String: Any])?["text"] as? String == "Reloaded without a restart.")
      let imageURL = try #require((added.json as? [String: Any])?["imageURL"] as? String)
      #expect(queryItems(of: imageURL)["v"] == newVersion, "\(imageURL)")
      let newList = try await client.get("/quotes")
      #expect((newList.json as? [Any])?.count == count + 1)
      #expect(newList.header("ETag") != nil && newList.header("ETag") != list.header("ETag"))
      let newCard = try await client.get("/cards/0.png?w=200&h=200")
      expectCard(newCard, format: "png")
      #expect(newCard.header("ETag") != card.header("ETag"), "the same card under a new version has a new ETag")
      // The old version's ETag no longer matches.
      #expect(try await client.get("/quotes", ifNoneMatch: list.header("ETag")).status == 200)

      let reloaded = logs.lines.filter { $0.contains("catalog reloaded") }
      #expect(reloaded.count == 1, "\(logs.lines)")
      #expect(
        reloaded.first?.contains("catalog reloaded: \(count + 1) quotes, ") == true
          && reloaded.first?.contains("content version \(newVersion)") == true, "\(reloaded)")
      #expect(Self.reloads(service, "ok") == 1)
    }
  }

  /// An invalid catalog (broken JSON, then a missing photo) is not served: the old one stays,
  /// each failed reload logs exactly one line naming the problem as start-up would, and counts.
  @Test func invalidCatalogKeepsTheOldOne() async throws {
    try await Self.withReloadableService { client, service, reloader, folder, logs in
      let count = service.catalog.quotes.count
      let version = service.contentVersion
      let quotes = folder.appendingPathComponent("quotes.json")
      let good = try Data(contentsOf: quotes)
      try Data("[{\"text\": ".utf8).write(to: quotes)
      #expect(!(await reloader.reload()))
      try good.write(to: quotes)
      let photo = try #require(service.catalog.pictures.first)
      try FileManager.default.removeItem(at: folder.appendingPathComponent(photo))
      #expect(!(await reloader.reload()))

      #expect(service.contentVersion == version && service.catalog.quotes.count == count)
      expectCard(try await client.get("/cards/1.png?w=200&h=200"), format: "png")
      #expect(try await client.get("/readyz").status == 200)
      let failures = logs.lines.filter { $0.contains("catalog not reloaded") }
      #expect(failures.count == 2, "one line per failed reload: \(logs.lines)")
      #expect(failures.allSatisfy { $0.contains("still serving content version \(version)") }, "\(failures)")
      #expect(failures.first?.contains("quotes.json") == true, "\(failures)")
      #expect(failures.last?.contains(photo) == true, "\(failures)")
      #expect(Self.reloads(service, "failed") == 2 && Self.reloads(service, "ok") == 0)
    }
  }

  /// A photo replaced on disk answers 503 until the catalog is loaded again; after a reload its
  /// cards are served again, under the new version.
  @Test func reloadServesAReplacedPhotoAgain() async throws {
    try await Self.withReloadableService { client, service, reloader, folder, _ in
      let pictures = service.catalog.pictures
      let url = "/cards/0.png?picture=\(pictures[0])&w=200&h=200"
      let before = try await client.get(url)
      expectCard(before, format: "png")
      try PictureChangeTests.replace(pictures[0], with: pictures[1], in: folder)
      // From the cache under the old version, then (another size) refused.
      expectError(try await client.get("/cards/0.png?picture=\(pictures[0])&w=300&h=200"), status: 503)
      #expect(await reloader.reload())
      let after = try await client.get(url)
      expectCard(after, format: "png")
      #expect(after.header("ETag") != before.header("ETag"))
      #expect(!sameBytes(after, before), "the new photo is drawn")
    }
  }
}

/// The worker pool's replacement of its workers (a reload), on real worker processes and the
/// test's clock: a worker rendering keeps its slot until its render is back, then its successor
/// takes it; an idle one is replaced (and ends) at once; capacity never drops.
@Suite(.serialized, .tags(.process, .binary)) struct WorkerReplacementTests {
  @Test(.timeLimit(.minutes(5)))
  func workersAreReplacedAfterTheirRender() async throws {
    let clock = ManualClock()
    let (pool, _) = try WorkerMemoryTests.pool(count: 1, restingLimitBytes: nil, pixelBudget: .max, clock: clock)
    try await WorkerMemoryTests.withRunningPool(pool) {
      let old = try #require(pool.pids[0])
      let start = clock.now
      let hung = Task {
        await pool.render(CardRequest(quote: .text(WorkerMemoryTests.hang, author: nil), seed: 1))
      }
      await clock.waitForSleeper(until: start.advanced(by: WorkerMemoryTests.renderTimeout))
      try await pool.replaceWorkers(with: pool.launch)
      #expect(pool.pids == [old], "the rendering worker keeps its slot until its render is back")
      #expect(pool.runningCount == 1)
      clock.advance(by: WorkerMemoryTests.renderTimeout)
      WorkerMemoryTests.expectDeadline(await hung.value)
      let successor = try #require(pool.pids[0])
      #expect(successor != old)
      guard case .card = await pool.render(CardRequest(quote: .text("after a reload", author: nil), seed: 1)) else {
        Issue.record("no card from the new worker")
        return
      }
      // Idle: replaced at once, and the old one ends.
      let successorExit = ProcessExit(successor)
      try await pool.replaceWorkers(with: pool.launch)
      let third = try #require(pool.pids[0])
      #expect(third != successor && pool.runningCount == 1)
      #expect(try await successorExit.wait(timeout: .seconds(20)), "the replaced idle worker ends")
      guard case .card = await pool.render(CardRequest(quote: .text("after another", author: nil), seed: 1)) else {
        Issue.record("no card from the third worker")
        return
      }
    }
  }
}

/// `serve` reloading its catalog on SIGHUP under load: clients keep asking for cards, quotes and
/// readiness while the test adds a quote and sends SIGHUP; every response is a 200, the new quote
/// is served under a new content version, and the process lives on. Then a broken catalog and
/// SIGHUP: one log line, the previous catalog still served. Every wait is on an event (a log line,
/// a count of responses), bounded.
@Suite(.serialized, .tags(.live, .process, .binary)) struct ReloadProcessTests {
  struct Load: Sendable {
    var statuses: [Int] = []
    var reloaded = false
    /// Responses received after the reload was seen.
    var afterReload = 0
  }

  static func get(_ port: Int, _ target: String) async throws -> RawHTTPResponse {
    try await onOwnThread { try RawHTTPConnection(port: port, request: "GET \(target) HTTP/1.1").response(timeout: 30) }
  }

  static func object(_ response: RawHTTPResponse) -> [String: Any]? {
    try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
  }

  @Test(.timeLimit(.minutes(3)))
  func reloadUnderLoadDropsNothing() async throws {
    let (folder, _) = try PictureChangeTests.catalogFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try await ServerProcess.start(
      arguments: [
        "serve", "--port", "0", "--host", "127.0.0.1", "--catalog", folder.path, "--concurrency", "2",
        "--max-renders-per-client", "2", "--max-queued-per-client", "64", "--queue", "64",
      ],
      environment: ["LOG_LEVEL": "info"])
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line: \(server.stderr)")
    let first = try await Self.get(port, "/quotes/0")
    let oldURL = try #require(Self.object(first)?["imageURL"] as? String, "\(first.text)")
    let oldVersion = try #require(queryItems(of: oldURL)["v"])
    let count = try #require(Self.object(try await Self.get(port, "/readyz"))?["quotes"] as? Int)

    // Three clients, each at most 150 requests, until 10 each have come back after the reload.
    let load = Watched(Load())
    let clients = (0..<3).map { client in
      Task {
        for index in 0..<150 {
          let targets = [
            "/cards/\(index % count).png?w=\(200 + client * 150 + index)&h=200", "/quotes/\(index % count)", "/readyz",
          ]
          let response = try await Self.get(port, targets[index % targets.count])
          let done = load.value.reloaded
          load.update {
            $0.statuses.append(response.status)
            if done { $0.afterReload += 1 }
          }
          if done && load.value.afterReload >= 30 { break }
        }
      }
    }
    // Under way before the reload.
    #expect(await load.wait(timeout: .seconds(60)) { $0.statuses.count >= 15 ? true : nil } == true)
    try ReloadTests.appendQuote("Served after SIGHUP.", to: folder)
    server.signal(SIGHUP)
    let line = await server.waitForLine(containing: "catalog reloaded")
    load.update { $0.reloaded = true }
    for client in clients { try await client.value }

    let line2 = try #require(line, "no 'catalog reloaded' line: \(server.stderr)")
    #expect(line2.contains("catalog reloaded: \(count + 1) quotes"), "\(line2)")
    let statuses = load.value.statuses
    #expect(
      statuses.allSatisfy { $0 == 200 },
      "every response a 200: \(Dictionary(grouping: statuses) { $0 }.mapValues(\.count))")
    #expect(server.process.isRunning, "SIGHUP never kills: \(server.stderr.suffix(2000))")
    let added = try await Self.get(port, "/quotes/\(count)")
    #expect(added.status == 200 && Self.object(added)?["text"] as? String == "Served after SIGHUP.", "\(added.text)")
    let newURL = try #require(Self.object(added)?["imageURL"] as? String)
    let newVersion = try #require(queryItems(of: newURL)["v"])
    #expect(newVersion != oldVersion && line2.contains(newVersion), "\(line2)")
    #expect(try await Self.get(port, relativeURL(newURL)).status == 200, "the new quote's card")

    // A broken catalog: one line, the last good catalog still served.
    try Data("[{\"text\": ".utf8).write(to: folder.appendingPathComponent("quotes.json"))
    server.signal(SIGHUP)
    let failure = await server.waitForLine(containing: "catalog not reloaded")
    #expect(failure?.contains("quotes.json: malformed JSON") == true, "\(server.stderr.suffix(2000))")
    #expect(failure?.contains("still serving content version \(newVersion)") == true, "\(String(describing: failure))")
    #expect(try await Self.get(port, "/quotes/\(count)").status == 200)
    let metrics = try await Self.get(port, "/metrics").text
    #expect(metricValue(metrics, "innerpeace_catalog_reloads_total", labels: ["result": "ok"]) == 1, "\(metrics)")
    #expect(metricValue(metrics, "innerpeace_catalog_reloads_total", labels: ["result": "failed"]) == 1)
    #expect(server.stderr.components(separatedBy: "catalog not reloaded").count == 2, "exactly one line")
    #expect(server.process.isRunning)

    server.signal(SIGTERM)
    #expect(try await server.waitForExit(timeout: .seconds(30)) == 0, "\(server.stderr.suffix(2000))")
  }
}
