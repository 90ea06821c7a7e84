import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import InnerPeaceServer

/// Records every request it renders, then renders it for real.
final class RecordingRenderer: CardRendering {
  let base: CardRenderer
  private let seen = NIOLockedValueBox<[CardRequest]>([])
  init(base: CardRenderer) { self.base = base }
  var catalog: Catalog { base.catalog }
  var requests: [CardRequest] { seen.withLockedValue { $0 } }
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    seen.withLockedValue { $0.append(request) }
    return try base.render(request)
  }
}

/// `/card.json` and `/cards/{quote}.json`: the typeset report of the card the image endpoint
/// draws for the same query, made only for these endpoints (issue 18, item 2).
@Suite struct ReportEndpointTests {
  static func decode(_ reply: Reply) throws -> TypesetReport {
    try JSONDecoder().decode(TypesetReport.self, from: Data(reply.body))
  }

  @Test func customReportTellsWhatWasSet() async throws {
    try await withRouter { client, _ in
      let text = "Peace is here. שלום עולם 静かな心で生きる。"
      let uri = "/card.json?text=\(queryEncoded(text))&author=Anon&w=480&h=320"
      let reply = try await client.get(uri)
      #expect(reply.status == 200, "\(reply)")
      #expect(reply.header("Content-Type") == "application/json; charset=utf-8")
      #expect(reply.header("Content-Length") == String(reply.body.count))
      #expect(reply.header("Cache-Control") == "public, max-age=86400")
      let report = try Self.decode(reply)
      #expect(report.width == 480 && report.height == 320)
      let fitted = try realRenderer().fitText(
        text, author: "Anon", preset: .custom(try CanvasSize(width: 480, height: 320)))
      #expect(report.lines == fitted.lines && report.quoteSize == fitted.fontSize)
      #expect(report.runs.contains { $0.script == "Hebr" && $0.family == "Noto Serif Hebrew" && $0.language == "he" })
      #expect(report.runs.contains { $0.language == "ja" && $0.family == "Noto Serif CJK JP" })
      #expect(reply.text.hasPrefix("{\n  \"authorLines\""), "pretty, sorted keys")

      // Revalidated by its own tag, which is not the image's.
      let etag = try #require(reply.header("ETag"))
      #expect(try await client.get(uri, ifNoneMatch: etag).status == 304)
      let image = try await client.get("/card.png?text=\(queryEncoded(text))&author=Anon&w=480&h=320")
      expectCard(image, format: "png", size: (480, 320))
      #expect(image.header("ETag") != etag)
    }
  }

  @Test func catalogReportMatchesTheCard() async throws {
    try await withRouter { client, service in
      let reply = try await client.get("/cards/3.json?w=400&h=300&author=false")
      #expect(reply.status == 200, "\(reply)")
      let report = try Self.decode(reply)
      let quote = service.catalog.quotes[3]
      let fitted = try realRenderer().fitText(
        quote.text, author: "", preset: .custom(try CanvasSize(width: 400, height: 300)))
      #expect(report.lines == fitted.lines && report.authorLines.isEmpty && report.authorSize == 0)
      #expect(reply.header("Cache-Control") == service.links.linkedCacheControl(forVersion: nil))
    }
  }

  /// Bad queries are the 4xx the image endpoints give, with the JSON error body.
  @Test func badQueriesAreRefused() async throws {
    try await withRouter { client, _ in
      expectError(try await client.get("/card.json"), status: 400, parameter: "text")
      expectError(try await client.get("/card.json?text=hi&format=png"), status: 400, parameter: "format")
      expectError(try await client.get("/card.json?text=hi&quality=80"), status: 400, parameter: "quality")
      expectError(try await client.get("/card.json?text=hi&preset=huge"), status: 400, parameter: "preset")
      expectError(try await client.get("/card.json?text=hi&w=300"), status: 400, parameter: "h")
      expectError(try await client.get("/card.json?text=%01"), status: 400, parameter: "text")
      let long = String(repeating: "a", count: Limits.maximumTextCharacters + 1)
      expectError(try await client.get("/card.json?text=\(long)"), status: 413, parameter: "text")
      expectError(try await client.get("/cards/0.json?picture=nope.jpg"), status: 404, parameter: "picture")
      expectError(try await client.get("/cards/0.json?align=up"), status: 400, parameter: "align")
      expectError(try await client.get("/cards/999999.json"), status: 404)
      #expect(try await client.get("/cards/x.json").status == 404)
    }
  }

  /// Only the report endpoints ask for a report; the image endpoints' renders never make one.
  @Test func imageEndpointsNeverAskForAReport() async throws {
    let renderer = RecordingRenderer(base: try realRenderer())
    try await withRouter(renderer: renderer, configuration: testConfiguration(cacheMegabytes: 0)) { client, _ in
      let uris = [
        "/card.png?text=hi&w=240&h=200", "/cards/1.png?w=240&h=200", "/random.png?seed=3&w=240&h=200",
        "/card.json?text=hi&w=240&h=200", "/cards/1.json?w=240&h=200",
      ]
      for uri in uris {
        let reply = try await client.get(uri)
        #expect(reply.status == 200, "\(uri): \(reply)")
      }
    }
    #expect(renderer.requests.map(\.includesReport) == [false, false, false, true, true])
  }

  /// A server with a key signs the custom report as it signs the custom card.
  @Test func customReportNeedsASignatureWhereTheCardDoes() async throws {
    var configuration = testConfiguration()
    configuration.urlSigner = try URLSigner(key: URLSignerTests.key)
    let signer = try URLSigner(key: URLSignerTests.key)
    try await withRouter(configuration: configuration) { client, _ in
      let url = "/card.json?text=Hello&w=240&h=200"
      expectError(try await client.get(url), status: 403, parameter: "signature")
      #expect(try await client.get(try #require(signer.sign(url))).status == 200)
      // A catalog report, like a catalog card, needs none unless all images are signed.
      #expect(try await client.get("/cards/0.json?w=240&h=200").status == 200)
    }
  }
}

/// The report over the worker wire: a request carries the flag, a card its report, only when
/// asked.
@Suite struct ReportWireTests {
  @Test func requestFlagRoundTrips() throws {
    #expect(try wireRoundTrip(CardRequest(seed: 3, includesReport: true))?.includesReport == true)
    #expect(try wireRoundTrip(CardRequest(seed: 3))?.includesReport == false)
  }

  @Test func reportRoundTripsOnlyWhenAsked() throws {
    let base = try realRenderer()
    let plain = try base.render(CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), seed: 4))
    let reported = try base.render(
      CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), seed: 4, includesReport: true))
    let report = try #require(reported.report)
    #expect(try wireRoundTrip(plain)?.facts.report == nil)
    #expect(try wireRoundTrip(reported)?.facts.report == report)
    #expect(try wireRoundTrip(reported)?.bytes == reported.bytes)
    // A damaged report is a bad frame, not a crash.
    let frame = WorkerFrame(.card(CardFacts(reported), restingBytes: 0)).encoded()
    var damaged = frame
    damaged.setInteger(UInt8(ascii: "["), at: frame.readableBytes - 3)
    let garbled = damaged
    #expect(throws: WorkerWireError.self) { try WorkerFrame(decoding: garbled) }
  }
}

extension ReportWireTests {
  /// The largest report a text within the limits makes (a run per character: 5,000 characters
  /// alternating Latin and Hebrew, on a canvas wide enough to set them all) crosses the wire.
  @Test func theLargestReportCrossesTheWire() throws {
    let text = String(repeating: "a\u{05D0}", count: Limits.maximumTextCharacters / 2)
    let card = try realRenderer().render(
      CardRequest(
        preset: .custom(try CanvasSize(width: 4096, height: 200)), quote: .text(text, author: nil), seed: 1,
        format: .jpeg, includesReport: true))
    let report = try #require(card.report)
    #expect(report.runs.count >= 4_000, "\(report.runs.count) runs: the text was cut short")
    let header = WorkerFrame.encodedHeader(WorkerWireHeader(.card(CardFacts(card), restingBytes: 0)))
    #expect(header.count > 1 << 20, "the case this guards: more than the old 1 MiB limit")
    #expect(try wireRoundTrip(card)?.facts.report == report)
  }
}

/// `innerpeace serve`, whose renders run in worker processes: the report crosses the wire.
@Suite(.tags(.live, .process, .binary)) struct ReportThroughWorkersTests {
  @Test(.timeLimit(.minutes(5)))
  func reportComesBackFromAWorker() async throws {
    let server = try await ServerProcess.start(
      arguments: ["serve", "--port", "0", "--host", "127.0.0.1", "--concurrency", "1"])
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let target = "/card.json?text=\(queryEncoded("Calm שלום"))&w=300&h=200"
    let response = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET \(target) HTTP/1.1").response(timeout: 30)
    }
    #expect(response.status == 200, "\(response.text)")
    let report = try JSONDecoder().decode(TypesetReport.self, from: Data(response.body))
    #expect(report.runs.contains { $0.script == "Hebr" } && report.runs.contains { $0.script == "Latn" })
  }
}
