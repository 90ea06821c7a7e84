import Foundation
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import NIOConcurrencyHelpers
import Testing

/// The picture of quote N is one rule (``InnerPeace/Catalog/picture(forQuote:offset:)``): its card
/// URL, `/quotes`, its page, `/today` and the feeds' entries, and `batch` with seed 0 all put the
/// quote on the same picture.
@Suite struct QuotePictureTests {
  /// Seven quotes of the day (the Atom feed's days) and the quotes they are, everywhere they are
  /// shown, on the picture the rule gives.
  @Test func aQuoteIsOnOnePictureEverywhere() async throws {
    let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_795_435_200))  // 2026-11-23 09:20 UTC
    let catalog = try bundledCatalog
    let batch = try BatchPlan(catalog: catalog, presets: [.og])
    var configuration = testConfiguration()
    configuration.timeZone = try #require(TimeZone(identifier: "Europe/Paris"))
    configuration.publicURL = "https://cards.example.com"
    configuration.now = { clock.withLockedValue { $0 } }
    try await withRouter(configuration: configuration) { client, _ in
      func rule(_ quote: Int) -> String { catalog.pictures[quote % catalog.pictures.count] }

      let feed = try await client.get("/feed.xml").text
      let enclosures = feed.matches(of: #/<link rel="enclosure" type="image/jpeg" href="([^"]+)"/>/#).map {
        String($0.1).replacingOccurrences(of: "&amp;", with: "&")
      }
      #expect(enclosures.count == 7)
      for url in enclosures {
        let quote = try #require(Int(path(of: url).dropFirst("/cards/".count).prefix { $0 != "." }), "\(url)")
        #expect(queryItems(of: url)["picture"] == rule(quote), "the feed's quote \(quote): \(url)")
      }

      let today = try #require(
        try await client.get("/today.png").header("Content-Location"), "/today names its card")
      let todayQuote = try #require(Int(path(of: today).dropFirst("/cards/".count).prefix { $0 != "." }))
      #expect(queryItems(of: today)["picture"] == rule(todayQuote), "/today: \(today)")

      let list = try #require(try await client.get("/quotes").json as? [[String: Any]])
      for object in list {
        let quote = try #require(object["index"] as? Int)
        let url = object["imageURL"] as? String ?? ""
        #expect(queryItems(of: url)["picture"] == rule(quote), "/quotes, quote \(quote): \(url)")
        #expect(batch.items[quote].picture == rule(quote), "batch, quote \(quote)")
      }

      for quote in [0, 1, todayQuote, catalog.quotes.count - 1] {
        let card = try await client.get("/cards/\(quote).png")
        let location = try #require(card.header("Content-Location"))
        #expect(queryItems(of: location)["picture"] == rule(quote), "/cards/\(quote): \(location)")
        let page = try await client.get("/q/\(quote)").text
        let image = try #require(
          page.firstMatch(of: #/<meta property="og:image" content="([^"]+)"/#).map {
            String($0.1).replacingOccurrences(of: "&amp;", with: "&")
          }, "/q/\(quote) has no og:image")
        #expect(queryItems(of: image)["picture"] == rule(quote), "/q/\(quote): \(image)")
      }
    }
  }
}
