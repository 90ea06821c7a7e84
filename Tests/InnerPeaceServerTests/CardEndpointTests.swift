import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import NIOConcurrencyHelpers
import Testing

/// The image endpoints: /random, /cards/{quote}, /card, /today. Cards are small custom sizes
/// (w and h) wherever the size does not matter, so that renders stay cheap in a debug build.
@Suite struct CardEndpointTests {
  /// "png" for .png and so on: the path extension, the media subtype.
  static let formats: [(ext: String, media: String)] = [
    ("png", "png"), ("jpg", "jpeg"), ("webp", "webp"), ("avif", "avif"),
  ]

  // MARK: /random

  /// Every format: the headers, the bytes, the same seed giving the same bytes (rendered twice:
  /// the cache is off), and the Content-Location giving those bytes again (a third render).
  @Test(arguments: ["png", "jpg", "webp", "avif"])
  func randomCard(ext: String) async throws {
    let media = Self.formats.first { $0.ext == ext }!.media
    let catalog = try bundledCatalog
    try await withRouter(configuration: checkedOrigin(testConfiguration(cacheMegabytes: 0))) { client, service in
      let uri = "/random.\(ext)?seed=7&w=320&h=240"
      let first = try await client.get(uri)
      expectCard(first, format: media, size: (320, 240))
      #expect(first.header("Cache-Control") == "no-store")

      // The headers name the quote and picture the seed picks, and the stable URL names them too.
      let choice = catalog.randomChoice(seed: 7)
      #expect(first.header("X-Quote-Index") == String(choice.quoteIndex))
      #expect(first.header("X-Picture") == choice.picture)
      let location = try #require(first.header("Content-Location"))
      #expect(path(of: location) == "/cards/\(choice.quoteIndex).\(ext)")
      #expect(location.hasPrefix("http://"), "Content-Location is absolute: \(location)")
      #expect(
        queryItems(of: location) == ["picture": choice.picture, "preset": "320x240", "v": service.contentVersion])
      let quote = catalog.quotes[choice.quoteIndex]
      #expect(percentDecoded(first.header("X-Share-Message") ?? "") == "\"\(quote.text)\" \u{2014} \(quote.author)")

      // Same seed: same bytes, same Content-Location (a second, independent render).
      let second = try await client.get(uri)
      expectCard(second, format: media, size: (320, 240))
      #expect(sameBytes(second, first), "the same seed must give the same bytes")
      #expect(second.header("Content-Location") == location)

      // The stable URL gives byte-identical bytes, cacheable for good.
      let stable = try await client.get(location)
      expectCard(stable, format: media, size: (320, 240))
      #expect(sameBytes(stable, first), "Content-Location must serve the same bytes")
      #expect(stable.header("Cache-Control") == "public, max-age=31536000, immutable")
      #expect(stable.header("X-Quote-Index") == first.header("X-Quote-Index"))
    }
  }

  /// `format=` on a URL without an extension picks the format (and the Content-Location's extension);
  /// `align=center` and `author=false` survive into the Content-Location, which serves the same card.
  @Test func randomOptionsTravelToContentLocation() async throws {
    try await withRouter { client, _ in
      let webp = try await client.get("/random?seed=3&w=240&h=200&format=webp&align=center&author=false")
      expectCard(webp, format: "webp", size: (240, 200))
      let location = try #require(webp.header("Content-Location"))
      #expect(path(of: location).hasPrefix("/cards/") && path(of: location).hasSuffix(".webp"), "\(location)")
      let items = queryItems(of: location)
      #expect(items["align"] == "center")
      #expect(items["author"] == "false")
      #expect(items["preset"] == "240x200")
      let again = try await client.get(location)
      expectCard(again, format: "webp", size: (240, 200))
      #expect(sameBytes(again, webp))
      // Without an author line the share message still names the author: it is the quote's.
      #expect(percentDecoded(webp.header("X-Share-Message") ?? "")?.contains(" \u{2014} ") == true)
    }
  }

  /// Different seeds are different requests; no seed at all still works (and is not cached by the client).
  @Test func randomWithoutSeedAnswers() async throws {
    try await withRouter { client, _ in
      let reply = try await client.get("/random.png?w=200&h=200")
      expectCard(reply, format: "png", size: (200, 200))
      #expect(reply.header("Cache-Control") == "no-store")
      #expect(reply.header("Content-Location").map { path(of: $0).hasPrefix("/cards/") } == true)
    }
  }

  // MARK: /cards/{quote}

  /// A stable card with the current version: strong ETag, immutable caching, 304 on a matching
  /// If-None-Match (also weak, also in a list, also `*`), 200 on another tag, and the default
  /// picture is the one /quotes names.
  @Test func stableCardCaching() async throws {
    let catalog = try bundledCatalog
    let defaultPicture = catalog.pictures[3 % catalog.pictures.count]
    try await withRouter(configuration: checkedOrigin()) { client, service in
      let uri = "/cards/3.png?w=300&h=200&v=\(service.contentVersion)"
      let card = try await client.get(uri)
      expectCard(card, format: "png", size: (300, 200))
      #expect(card.header("Cache-Control") == "public, max-age=31536000, immutable")
      #expect(card.header("X-Quote-Index") == "3")
      #expect(card.header("X-Picture") == defaultPicture)
      let etag = try #require(card.header("ETag"))
      #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 2, "strong and quoted: \(etag)")
      #expect(!etag.hasPrefix("W/"))
      let quote = catalog.quotes[3]
      #expect(percentDecoded(card.header("X-Share-Message") ?? "") == quote.shareMessage)

      for condition in [etag, "W/\(etag)", "\"nope\", \(etag)", "*"] {
        let notModified = try await client.get(uri, ifNoneMatch: condition)
        #expect(notModified.status == 304, "If-None-Match: \(condition) → \(notModified)")
        #expect(notModified.body.count == 0, "a 304 has no body")
        #expect(notModified.header("ETag") == etag)
        #expect(notModified.header("Cache-Control") == "public, max-age=31536000, immutable")
        // RFC 9110 §15.4.5: the Content-Location the 200 carries.
        #expect(notModified.header("Content-Location") == card.header("Content-Location"), "\(notModified)")
      }
      #expect(card.header("Content-Location") != nil)
      let negotiated = try await client.get("/cards/3?w=300&h=200", ifNoneMatch: "*")
      #expect(negotiated.status == 304 && negotiated.header("Vary") == "Accept", "\(negotiated)")
      #expect(path(of: negotiated.header("Content-Location") ?? "") == "/cards/3.png", "\(negotiated)")
      let other = try await client.get(uri, ifNoneMatch: "\"0123456789abcdef\"")
      #expect(other.status == 200)
      #expect(sameBytes(other, card))
      #expect(other.header("ETag") == etag)

      // Naming the default picture is the same card; the default is deterministic.
      let named = try await client.get("\(uri)&picture=\(queryEncoded(defaultPicture))", ifNoneMatch: etag)
      #expect(named.status == 304, "picture omitted must mean picture=\(defaultPicture)")
      let again = try await client.get(uri)
      #expect(sameBytes(again, card))
      #expect(again.header("ETag") == etag)
    }
  }

  /// The ETag follows everything that changes the bytes (learnt without rendering: `*` gives a 304
  /// that carries the tag), and is the same for /random's card and its Content-Location.
  @Test func etagsDifferPerCard() async throws {
    let catalog = try bundledCatalog
    try await withRouter { client, _ in
      func tag(_ uri: String) async throws -> String {
        let reply = try await client.get(uri, ifNoneMatch: "*")
        #expect(reply.status == 304, "\(uri): \(reply)")
        return reply.header("ETag") ?? "missing"
      }
      let variants = [
        "/cards/3.png", "/cards/4.png", "/cards/3.jpg", "/cards/3.webp", "/cards/3.png?preset=square",
        "/cards/3.png?picture=\(queryEncoded(catalog.pictures[0]))",
        "/cards/3.png?picture=\(queryEncoded(catalog.pictures[1]))", "/cards/3.png?align=center",
        "/cards/3.png?author=false", "/cards/3.png?w=300&h=200",
      ]
      var tags: [String: String] = [:]
      for uri in variants { tags[uri] = try await tag(uri) }
      #expect(Set(tags.values).count == variants.count, "every variant needs its own ETag: \(tags)")
      #expect(try await tag("/cards/3.png?preset=og") == tags["/cards/3.png"], "og is the default preset")
      #expect(try await tag("/cards/3.png") == tags["/cards/3.png"], "ETags are stable")
    }
  }

  /// Unknown quote, non-numeric quote, unknown or path-like picture: 404 JSON (an unknown
  /// extension on a quote is a 400: ErrorTests).
  @Test(arguments: [
    "/cards/99999.png", "/cards/-1.png", "/cards/abc.png", "/cards/1e3.png", "/cards/+3.png",
    "/cards/03.png", "/cards/03", "/cards/3.png.png", "/cards/.png",
    "/cards/3.png?picture=nope.jpg", "/cards/3.png?picture=..%2Fx", "/cards/3.png?picture=../x",
    "/cards/3.png?picture=..%2F..%2F..%2Fetc%2Fpasswd", "/cards/3.png?picture=%2Fetc%2Fpasswd",
    "/cards/3.png?picture=", "/cards/3.png?picture=.", "/cards/3.png?picture=..",
    "/cards/3.png?picture=..%5C..%5Cwindows", "/cards/3.png?picture=photos%2Faqua.jpg",
  ])
  func stableCardNotFound(uri: String) async throws {
    try await withRouter { client, _ in
      let reply = try await client.get(uri)
      expectError(reply, status: 404)
      if uri.contains("picture=") {
        #expect((reply.json as? [String: [String: String]])?["error"]?["parameter"] == "picture", "\(reply)")
      }
    }
  }

  // MARK: /card

  /// Any text is text: `<b>hi</b>` renders as written, with a day's caching and an ETag; the
  /// share message is the text alone when there is no author.
  @Test func customTextCard() async throws {
    try await withRouter { client, _ in
      let uri = "/card.png?text=\(queryEncoded("<b>hi</b>"))&w=240&h=200"
      let card = try await client.get(uri)
      expectCard(card, format: "png", size: (240, 200))
      #expect(card.header("Cache-Control") == "public, max-age=86400")
      let etag = try #require(card.header("ETag"))
      #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
      #expect(percentDecoded(card.header("X-Share-Message") ?? "") == "\"<b>hi</b>\"")
      #expect(card.header("X-Quote-Index") == nil, "custom text has no catalog index")
      let notModified = try await client.get(uri, ifNoneMatch: etag)
      #expect(notModified.status == 304)
      #expect(notModified.body.count == 0)

      let authored = try await client.get(
        "/card.webp?text=\(queryEncoded("Be here now. \u{1F33F} 静"))&author=\(queryEncoded("Ram Dass"))&w=240&h=200")
      expectCard(authored, format: "webp", size: (240, 200))
      #expect(
        percentDecoded(authored.header("X-Share-Message") ?? "") == "\"Be here now. \u{1F33F} 静\" \u{2014} Ram Dass")
      #expect(authored.header("ETag") != etag)
    }
  }

  /// A text or author that cannot be a card is a 400 even under an If-None-Match that any tag
  /// matches (`*`): the request is refused before the tag is compared. A valid text still gets its 304.
  @Test func invalidTextIsRefusedWhateverTheCondition() async throws {
    try await withRouter { client, _ in
      let refused = [
        ("text=\(queryEncoded("a\u{90}b"))", "text"), ("text=%20%20", "text"), ("text=", "text"),
        ("text=hi&author=\(queryEncoded("x\u{7}y"))", "author"),
      ]
      for (query, parameter) in refused {
        for condition in ["*", "W/\"whatever\""] {
          let reply = try await client.get("/card.webp?\(query)&w=200&h=200", ifNoneMatch: condition)
          expectError(reply, status: 400)
          #expect(
            (reply.json as? [String: [String: String]])?["error"]?["parameter"] == parameter,
            "\(query), If-None-Match: \(condition): \(reply)")
        }
      }
      let valid = try await client.get("/card.webp?text=hi&w=200&h=200", ifNoneMatch: "*")
      #expect(valid.status == 304, "\(valid)")
    }
  }

  /// Text that cannot fit even at the smallest size is ellipsized, and the response says so.
  @Test func overflowingTextReportsTruncation() async throws {
    try await withRouter { client, _ in
      let text = String(repeating: "calm ", count: 900)
      let reply = try await client.get("/card.png?text=\(queryEncoded(text))&w=200&h=200")
      expectCard(reply, format: "png", size: (200, 200))
      #expect(reply.header("X-Text-Truncated") == "true")
      let short = try await client.get("/card.png?text=calm&w=200&h=200")
      #expect(short.header("X-Text-Truncated") == "false")
    }
  }

  /// A glyph no font can draw (a private-use character, an unassigned code point) is drawn as a
  /// box, and the response counts them; text every character of which has a face says 0.
  @Test func missingGlyphsAreReported() async throws {
    try await withRouter { client, _ in
      let tofu = try await client.get("/card.png?text=\(queryEncoded("calm \u{0380} and \u{0378}"))&w=240&h=200")
      expectCard(tofu, format: "png", size: (240, 200))
      #expect(tofu.header("X-Missing-Glyphs") == "2")
      let clean = try await client.get("/card.png?text=\(queryEncoded("calm 静 שלום"))&w=240&h=200")
      #expect(clean.header("X-Missing-Glyphs") == "0")
    }
  }

  /// Texts that killed the server with one request (issue 7): two wider than any bounds, which
  /// trapped in the fitter, and one Pango aborted on at 1000x1000. Each is a card.
  @Test(arguments: [
    ("text=\(queryEncoded("\u{1F468}" + String(repeating: "\u{200D}\u{1F468}", count: 120)))", 240),
    ("text=\(queryEncoded(String(repeating: "\u{1100}", count: 200) + "\u{1161}\u{11A8}"))", 240),
    ("text=%D7%91%E1%AB%A0%E1%8C%A2%E1%88%99%D6%BF%F0%9F%8F%BB%E2%83%A3%E1%8C%A6%E1%8A%BB&author=%E1%AA%B1", 1000),
  ])
  func hostileTextIsACard(query: String, side: Int) async throws {
    try await withRouter { client, _ in
      let reply = try await client.get("/card.png?\(query)&w=\(side)&h=\(side)")
      expectCard(reply, format: "png", size: (side, side))
    }
  }

  /// Two different (text, author) pairs must never share a cache entry or an ETag. Today the
  /// cache key is `text|options|picture|author|text`, so `author=x&text=y|z` and
  /// `author=x|y&text=z` collide and the second request is served the first one's card.
  @Test func customCardsWithPipesDoNotCollide() async throws {
    try await withRouter { client, _ in
      let first = try await client.get("/card.png?text=\(queryEncoded("y|z"))&author=x&w=200&h=200")
      expectCard(first, format: "png", size: (200, 200))
      #expect(percentDecoded(first.header("X-Share-Message") ?? "") == "\"y|z\" \u{2014} x")
      let second = try await client.get("/card.png?text=z&author=\(queryEncoded("x|y"))&w=200&h=200")
      expectCard(second, format: "png", size: (200, 200))
      #expect(
        percentDecoded(second.header("X-Share-Message") ?? "") == "\"z\" \u{2014} x|y",
        "served another request's cached card")
      #expect(second.header("ETag") != first.header("ETag"), "different cards, same ETag")
    }
  }

  /// /card sets text and author with typographic punctuation; `straightQuotes=true` keeps what
  /// was typed, as its own cached card with its own ETag; a value that is not a boolean is a 400.
  @Test func customCardPunctuationAndStraightQuotes() async throws {
    try await withRouter { client, _ in
      let base =
        "/card.png?text=\(queryEncoded(#""It's time" -- now..."#))&author=\(queryEncoded("O'Brien"))&w=240&h=200"
      let typographic = try await client.get(base)
      expectCard(typographic, format: "png", size: (240, 200))
      #expect(
        percentDecoded(typographic.header("X-Share-Message") ?? "") == "\"“It’s time” — now…\" \u{2014} O’Brien")
      let straight = try await client.get(base + "&straightQuotes=true")
      expectCard(straight, format: "png", size: (240, 200))
      #expect(
        percentDecoded(straight.header("X-Share-Message") ?? "") == "\"\"It's time\" -- now...\" \u{2014} O'Brien")
      #expect(straight.header("ETag") != typographic.header("ETag"), "two cards, one ETag")
      #expect(!sameBytes(straight, typographic), "the straight card was served from the typographic one's cache")
      let explicit = try await client.get(base + "&straightQuotes=false")
      #expect(sameBytes(explicit, typographic))
      _ = expectError(try await client.get(base + "&straightQuotes=maybe"), status: 400, parameter: "straightQuotes")
    }
  }

  /// `lang` on /card: the text's language, its own cached card (Han set in the Japanese face for
  /// `ja`, not the Simplified Chinese one guessed from Han alone); a tag of the wrong form is a 400
  /// naming it.
  @Test func customCardLanguage() async throws {
    try await withRouter { client, _ in
      let base = "/card.png?text=\(queryEncoded("平和と静寂"))&w=240&h=200&picture=aqua.jpg"
      let guessed = try await client.get(base)
      expectCard(guessed, format: "png", size: (240, 200))
      let japanese = try await client.get(base + "&lang=ja")
      expectCard(japanese, format: "png", size: (240, 200))
      #expect(japanese.header("ETag") != guessed.header("ETag"), "two cards, one ETag")
      let normalised = try await client.get(base + "&lang=JA")
      #expect(normalised.header("ETag") == japanese.header("ETag"), "ja and JA are one language")
      for bad in ["japanese", "ja-", "j", "ja_JP_x", "1a"] {
        _ = expectError(try await client.get(base + "&lang=\(queryEncoded(bad))"), status: 400, parameter: "lang")
      }
    }
  }

  /// On /card, `author` is the author's name: an author called "no" (or "0", or "false") is drawn
  /// like any other name, as the share message says. Today CardOptions also reads `author` as
  /// the on/off switch of /random and /cards, so these names silently vanish from the card.
  @Test func customCardAuthorNamedNoIsDrawn() async throws {
    let picture = try bundledCatalog.pictures[0]
    try await withRouter { client, _ in
      let base = "/card.png?text=Stillness&picture=\(queryEncoded(picture))&w=240&h=200"
      let withoutAuthor = try await client.get(base)
      expectCard(withoutAuthor, format: "png", size: (240, 200))
      let namedNo = try await client.get(base + "&author=no")
      expectCard(namedNo, format: "png", size: (240, 200))
      #expect(percentDecoded(namedNo.header("X-Share-Message") ?? "") == "\"Stillness\" \u{2014} no")
      #expect(!sameBytes(namedNo, withoutAuthor), "author=no was not drawn: the card equals the one without an author")
    }
  }

  // MARK: /today

  /// A card URL without the current version (none, or an old one) is never immutable: it is
  /// cached for five minutes and revalidated with its ETag (the same card and tag as the
  /// versioned URL), and its Content-Location names the versioned URL.
  @Test func unversionedCardRevalidates() async throws {
    try await withRouter(configuration: checkedOrigin()) { client, service in
      let current = try await client.get("/cards/5.png?w=240&h=200&v=\(service.contentVersion)")
      #expect(current.header("Cache-Control") == "public, max-age=31536000, immutable")
      for uri in ["/cards/5.png?w=240&h=200", "/cards/5.png?w=240&h=200&v=000000000000"] {
        let reply = try await client.get(uri)
        expectCard(reply, format: "png", size: (240, 200))
        #expect(reply.header("Cache-Control") == "public, max-age=300", "\(uri)")
        #expect(reply.header("ETag") == current.header("ETag"))
        #expect(sameBytes(reply, current))
        let location = try #require(reply.header("Content-Location"))
        #expect(queryItems(of: location)["v"] == service.contentVersion, "\(location)")
        let revalidated = try await client.get(uri, ifNoneMatch: current.header("ETag"))
        #expect(revalidated.status == 304)
        #expect(revalidated.header("Cache-Control") == "public, max-age=300")
      }
    }
  }

  /// The quote of the day: cacheable until midnight, its stable card named, the same all day.
  @Test func todayCard() async throws {
    try await withRouter(configuration: checkedOrigin()) { client, service in
      let today = try await client.get("/today.png?w=240&h=200")
      expectCard(today, format: "png", size: (240, 200))
      let cacheControl = try #require(today.header("Cache-Control"))
      #expect(cacheControl.hasPrefix("public, max-age="), "\(cacheControl)")
      let maxAge = Int(cacheControl.dropFirst("public, max-age=".count)) ?? -1
      #expect(maxAge > 0 && maxAge <= 86_400, "\(cacheControl)")
      #expect(today.header("ETag")?.hasPrefix("\"") == true)
      let location = try #require(today.header("Content-Location"))
      #expect(path(of: location) == "/cards/\(today.header("X-Quote-Index") ?? "?").png", "\(location)")
      #expect(queryItems(of: location)["picture"] == today.header("X-Picture"))
      #expect(queryItems(of: location)["preset"] == "240x200")
      #expect(queryItems(of: location)["v"] == service.contentVersion)

      let stable = try await client.get(location)
      expectCard(stable, format: "png", size: (240, 200))
      #expect(sameBytes(stable, today), "today's card must be its stable card")
      let again = try await client.get("/today.png?w=240&h=200")
      #expect(again.header("Content-Location") == location)
      #expect(again.header("ETag") == today.header("ETag"))
      let notModified = try await client.get("/today.png?w=240&h=200", ifNoneMatch: today.header("ETag"))
      #expect(notModified.status == 304, "\(notModified)")
      #expect(notModified.header("Content-Location") == location, "a 304 names the card its 200 would")
    }
  }

  /// `/today` follows the configured time zone's midnight, read per request: one second before
  /// it the card is cacheable for one second; at it the date (and so the ETag) is the next day's,
  /// cacheable until the next midnight, here 23 hours away (Paris' clocks go forward that night).
  @Test func todayTurnsAtMidnightInTheConfiguredZone() async throws {
    let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_774_738_799))  // 2026-03-28 22:59:59 UTC
    var configuration = checkedOrigin()
    configuration.timeZone = try #require(TimeZone(identifier: "Europe/Paris"))
    configuration.now = { clock.withLockedValue { $0 } }
    try await withRouter(configuration: configuration) { client, _ in
      let before = try await client.get("/today.png?w=200&h=200", ifNoneMatch: "*")
      #expect(before.status == 304)
      #expect(before.header("Cache-Control") == "public, max-age=1")
      clock.withLockedValue { $0 += 1 }  // 2026-03-29 00:00:00 in Paris
      let after = try await client.get("/today.png?w=200&h=200")
      expectCard(after, format: "png", size: (200, 200))
      #expect(after.header("Cache-Control") == "public, max-age=82800")
      #expect(after.header("ETag") != before.header("ETag"), "a new day is a new card")
    }
  }
}
