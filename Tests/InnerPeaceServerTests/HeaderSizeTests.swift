import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Testing

/// Every card's header block fits the 4 KiB that proxies such as nginx give it by default, for
/// the longest texts the service accepts, on every image route; and every header built from
/// content is ASCII.
@Suite struct HeaderSizeTests {
  /// The longest texts a quote may hold: 5,000 characters (at most 20,000 bytes).
  static let longTexts: [(name: String, text: String)] = [
    ("CJK", String(String(repeating: "静かな湖に映る月の光、心の平和。", count: 400).prefix(Limits.maximumTextCharacters))),
    ("emoji", String(repeating: "\u{1F33F}\u{1F30A}\u{1F319}\u{1F54A}", count: 1_250)),
    (
      "English",
      String(
        String(repeating: "Breathe in peace and let the quiet morning settle every restless thought. ", count: 80)
          .prefix(Limits.maximumTextCharacters - 1))
    ),
  ]
  /// The longest author: 200 characters of CJK.
  static let longAuthor = String(repeating: "禅", count: Limits.maximumAuthorCharacters)
  /// A picture name of 243 bytes of UTF-8, 729 once percent-encoded.
  static let longPicture = String(repeating: "静", count: 80) + ".jpg"

  /// What the HTTP server adds to the router's fields (Date, Connection, Server), and a signature
  /// in Content-Location when every image URL is signed, with room to spare.
  static let serverAllowance = 160

  /// The size of the header block as it goes on the wire: status line, `name: value` lines, the
  /// empty line.
  static func headerBlockBytes(_ reply: Reply) -> Int {
    var bytes = "HTTP/1.1 \(reply.status) OK\r\n".utf8.count + 2
    for field in reply.headers { bytes += field.name.rawName.utf8.count + 2 + field.value.utf8.count + 2 }
    return bytes
  }

  @Test func everyImageRouteKeepsItsHeaderBlockUnder4KiB() async throws {
    let base = try realRenderer()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-headers-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.copyItem(
      at: base.catalog.directory.appendingPathComponent(base.catalog.pictures[0]),
      to: folder.appendingPathComponent(Self.longPicture))
    let catalog = try Catalog(
      quotes: Self.longTexts.map { Quote(text: $0.text, author: Self.longAuthor) }, pictures: [Self.longPicture],
      directory: folder)
    for (name, text) in Self.longTexts {
      #expect(text.count <= Limits.maximumTextCharacters && text.utf8.count <= Limits.maximumTextBytes, "\(name)")
    }
    var configuration = testConfiguration()
    // The longest origin: a host of 240 characters.
    configuration.publicURL = "https://" + String(repeating: "a", count: 236) + ".com"
    let renderer = HeadersOnlyRenderer(base: CannedRenderer(base: base), catalog: catalog)
    try await withRouter(renderer: renderer, configuration: configuration) { client, service in
      let picture = queryEncoded(Self.longPicture)
      var paths: [String] = ["/today.png", "/today.jpg", "/today"]
      for index in catalog.quotes.indices {
        paths += [
          "/cards/\(index).png", "/cards/\(index).webp?picture=\(picture)&preset=story&v=\(service.contentVersion)",
          "/cards/\(index)",
        ]
      }
      for seed in 0..<12 { paths.append("/random.jpg?seed=\(seed)") }
      // /card: the longest text whose URI is accepted (32 KiB; a 5,000-character CJK text
      // encodes to 45 KB, so there the catalog routes above carry the longest).
      for (_, text) in Self.longTexts {
        var accepted = text
        func target() -> String {
          "/card.png?text=\(queryEncoded(accepted))&author=\(queryEncoded(Self.longAuthor))&picture=\(picture)"
        }
        while target().utf8.count > HTTPLimits.maximumURILength { accepted.removeLast(50) }
        paths.append(target())
      }
      for path in paths {
        let reply = try await client.get(path)
        #expect(reply.status == 200, "\(path.prefix(80)): \(reply)")
        let bytes = Self.headerBlockBytes(reply)
        #expect(
          bytes + Self.serverAllowance < 4_096, "\(path.prefix(80)): a header block of \(bytes) bytes: \(reply.headers)"
        )
        for field in reply.headers {
          #expect(
            field.value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F },
            "\(field.name) is not ASCII: \(field.value.prefix(80))")
        }
        #expect(reply.header("X-Picture").flatMap(percentDecoded) == Self.longPicture, "\(path.prefix(80))")
      }
    }
  }

  /// A short share message is still sent, percent-encoded; one over the cut-off is left out
  /// (it is in /quotes/{index} and on the page).
  @Test func shareMessageHeaderOnlyWhenShort() async throws {
    try await withRouter(renderer: CannedTextRenderer(base: try realRenderer())) { client, _ in
      // In quotes (%22 each), 1,024 bytes encoded: the longest sent.
      let short = String(repeating: "a", count: 1_018)
      let shortReply = try await client.get("/card.png?text=\(short)")
      #expect(percentDecoded(shortReply.header("X-Share-Message") ?? "") == "\"\(short)\"")
      let long = String(repeating: "a", count: 1_030)
      let longReply = try await client.get("/card.png?text=\(long)")
      #expect(longReply.status == 200)
      #expect(longReply.header("X-Share-Message") == nil, "\(longReply.headers)")
      let cjk = String(repeating: "静", count: 120)  // 360 bytes, 1,080 encoded
      let cjkReply = try await client.get("/card.png?text=\(queryEncoded(cjk))")
      #expect(cjkReply.header("X-Share-Message") == nil, "\(cjkReply.headers)")
    }
  }
}

/// Answers with one small real card, but with the quote, picture and share message the request
/// asks for: the headers of the longest texts, without the time of laying them out.
final class HeadersOnlyRenderer: CardRendering {
  let base: CannedRenderer
  let catalog: Catalog
  init(base: CannedRenderer, catalog: Catalog) {
    self.base = base
    self.catalog = catalog
  }

  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    let card = try base.render(request)
    let (randomQuote, randomPicture) = catalog.randomChoice(seed: request.seed)
    let quote: Quote
    var index: Int? = nil
    switch request.quote {
    case .random:
      index = randomQuote
      quote = catalog.quotes[randomQuote]
    case .index(let value):
      index = value
      quote = catalog.quotes[value]
    case .text(let text, let author): quote = Quote(text: text, author: author ?? "")
    }
    let picture: String
    switch request.picture {
    case .random: picture = randomPicture
    case .named(let name): picture = name
    }
    return RenderedCard(
      bytes: card.bytes, format: card.format, size: card.size, quoteIndex: index, quote: quote, picture: picture,
      shareMessage: quote.shareMessage, fontSize: card.fontSize, truncated: false, layoutPasses: 1,
      timings: StageTimings())
  }
}

/// The same over the bundled catalog.
final class CannedTextRenderer: CardRendering {
  let inner: HeadersOnlyRenderer
  init(base: CardRenderer) { inner = HeadersOnlyRenderer(base: CannedRenderer(base: base), catalog: base.catalog) }
  var catalog: Catalog { inner.catalog }
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard { try inner.render(request) }
}
