import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

/// The image endpoints: `/random`, `/cards/{quote}`, `/card`, `/today`, each as .png, .jpg, .jpeg,
/// .webp or .avif, and (but `/card`) without an extension, in a format chosen from `Accept`; and the
/// cards' reports, `/cards/{quote}.json` and `/card.json`.
struct CardController<Renderer: CardRendering> {
  let service: CardService<Renderer>

  /// Registers the endpoints' routes from ``RouteTable``.
  func addRoutes(to router: some RouterMethods<BasicRequestContext>) {
    let configuration = service.configuration
    for operation in [RouteTable.Operation.randomCard, .randomCardNegotiated] {
      router.get(operation, configuration: configuration) { request, _, match in
        try await random(request, match.query, pathFormat: match.pathFormat)
      }
    }
    for operation in [RouteTable.Operation.catalogCard, .catalogCardNegotiated] {
      router.get(operation, configuration: configuration) { request, context, match in
        try await stable(request, match.query, quote: try Self.quote(context), pathFormat: match.pathFormat)
      }
    }
    router.get(.customCard, configuration: configuration) { request, _, match in
      try await custom(request, match.query, pathFormat: match.pathFormat)
    }
    router.get(.customCardReport, configuration: configuration) { request, _, match in
      try await customReport(request, match.query)
    }
    router.get(.catalogCardReport, configuration: configuration) { request, context, match in
      try await stableReport(request, match.query, quote: try Self.quote(context, report: true))
    }
    for operation in [RouteTable.Operation.todayCard, .todayCardNegotiated] {
      router.get(operation, configuration: configuration) { request, _, match in
        try await today(request, match.query, pathFormat: match.pathFormat)
      }
    }
  }

  /// The path's `{quote}`: a whole number, else a 404.
  private static func quote(_ context: BasicRequestContext, report: Bool = false) throws(ServiceError) -> Int {
    try context.parameters.wholeNumber(
      "quote",
      orNotFound: report
        ? "no such card: use /cards/{quote}.json" : "no such card: use /cards/{quote}.png, .jpg, .jpeg, .webp or .avif")
  }

  // MARK: Endpoints

  /// A random card: uncacheable, naming the quote and picture it chose and its stable URL.
  func random(_ request: Request, _ query: QueryParameters, pathFormat: String?) async throws -> Response {
    let options = try CardOptions(query: query, pathFormat: pathFormat, accept: request.headers[.accept])
    let seed: UInt64
    if let text = query["seed"] {
      guard let value = WholeNumber.exact(text, as: UInt64.self) else {
        throw ServiceError.badParameter("seed", "seed must be a whole number from 0 to \(UInt64.max)")
      }
      seed = value
    } else {
      seed = UInt64.random(in: .min ... .max)
    }
    let choice = service.catalog.randomChoice(seed: seed)
    let (card, key) = try await catalogCard(quote: choice.quoteIndex, picture: choice.picture, options: options)
    var headers = cardHeaders(card, options: options)
    headers[.cacheControl] = "no-store"
    headers[.contentLocation] = service.links.absolute(
      service.links.cardPath(quote: choice.quoteIndex, picture: choice.picture, options: options), for: request)
    headers[.eTag] = service.etag(for: key)
    return response(card, headers: headers)
  }

  /// `/cards/{quote}.{format}?picture=&preset=&v=` (or `/cards/{quote}`): a stable card, immutable
  /// when `v` is the current content version; without it (or with an old one) cacheable for
  /// minutes, then revalidated.
  func stable(_ request: Request, _ query: QueryParameters, quote index: Int, pathFormat: String?) async throws
    -> Response
  {
    let options = try CardOptions(query: query, pathFormat: pathFormat, accept: request.headers[.accept])
    guard service.catalog.quotes.indices.contains(index) else {
      throw ServiceError.from(.quoteIndexOutOfRange(index: index, count: service.catalog.quotes.count))
    }
    let picture = try pictureParameter(query) ?? service.catalog.picture(forQuote: index)
    let key = catalogKey(quote: index, picture: picture, options: options)
    let etag = service.etag(for: key)
    let cacheControl = service.links.linkedCacheControl(forVersion: query["v"])
    let contentLocation = service.links.absolute(
      service.links.cardPath(quote: index, picture: picture, options: options), for: request)
    if var notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      if options.negotiated { notModified.headers[.vary] = "Accept" }
      // RFC 9110 §15.4.5: a 304 carries the Content-Location its 200 would.
      notModified.headers[.contentLocation] = contentLocation
      return notModified
    }
    let (card, _) = try await catalogCard(quote: index, picture: picture, options: options)
    var headers = cardHeaders(card, options: options)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    headers[.contentLocation] = contentLocation
    return response(card, headers: headers)
  }

  /// `/card.png?text=&author=`: any text, within ``InnerPeace/Limits``.
  func custom(_ request: Request, _ query: QueryParameters, pathFormat: String?) async throws -> Response {
    let (cardRequest, options, key) = try customCardRequest(request, query, pathFormat: pathFormat)
    let etag = service.etag(for: key)
    let cacheControl = "public, max-age=86400"
    if let notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      return notModified
    }
    let card = try await service.card(for: cardRequest, key: key)
    var headers = cardHeaders(card, options: options)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    return response(card, headers: headers)
  }

  /// `/card.json?text=&author=`: the ``InnerPeace/TypesetReport`` of the card `/card.png` draws
  /// for the same query (its image is rendered in a worker, as any card, but not sent or kept).
  func customReport(_ request: Request, _ query: QueryParameters) async throws -> Response {
    // The format does not change what is set; the query cannot name one.
    let (imageRequest, _, key) = try customCardRequest(request, query, pathFormat: "png")
    var cardRequest = imageRequest
    cardRequest.includesReport = true
    return try await report(request, cardRequest, key: "report|\(key)", cacheControl: "public, max-age=86400")
  }

  /// `/cards/{quote}.json?picture=&preset=`: the ``InnerPeace/TypesetReport`` of the catalog card
  /// `/cards/{quote}.png` draws for the same query.
  func stableReport(_ request: Request, _ query: QueryParameters, quote index: Int) async throws -> Response {
    let options = try CardOptions(query: query, pathFormat: "png", accept: nil)
    guard service.catalog.quotes.indices.contains(index) else {
      throw ServiceError.from(.quoteIndexOutOfRange(index: index, count: service.catalog.quotes.count))
    }
    let picture = try pictureParameter(query) ?? service.catalog.picture(forQuote: index)
    let cardRequest = CardRequest(
      preset: options.preset, quote: .index(index), picture: .named(picture), seed: 0, format: options.format,
      showsAuthor: options.showsAuthor, alignment: options.alignment, includesReport: true)
    return try await report(
      request, cardRequest, key: "report|\(catalogKey(quote: index, picture: picture, options: options))",
      cacheControl: service.links.linkedCacheControl(forVersion: query["v"]))
  }

  // MARK: Helpers

  /// The request, options and cache key of `/card.{format}` (and `/card.json`), checked as the
  /// renderer checks them.
  private func customCardRequest(_ request: Request, _ query: QueryParameters, pathFormat: String?) throws -> (
    CardRequest, CardOptions, String
  ) {
    // Here `author` is the author's name, not the on/off switch of the other endpoints.
    let options = try CardOptions(
      query: query, pathFormat: pathFormat, accept: request.headers[.accept], authorIsSwitch: false)
    guard let text = query["text"] else { throw ServiceError.badParameter("text", "text is required") }
    guard text.count <= Limits.maximumTextCharacters, text.utf8.count <= Limits.maximumTextBytes else {
      throw ServiceError(
        .contentTooLarge, parameter: "text",
        "text is \(text.count) characters; the limit is \(Limits.maximumTextCharacters) (and \(Limits.maximumTextBytes) bytes)"
      )
    }
    let author = query["author"] ?? ""
    let picture = try pictureParameter(query)
    let straightQuotes = try CardOptions.boolean(query, "straightQuotes") ?? false
    let language = try Self.languageParameter(query)
    let seed: UInt64 = picture == nil ? UInt64(truncatingIfNeeded: StableHash.of(text)) : 0
    let cardRequest = CardRequest(
      preset: options.preset, quote: .text(text, author: author), picture: picture.map { .named($0) } ?? .random,
      seed: seed, format: options.format, showsAuthor: options.showsAuthor, alignment: options.alignment,
      typographicPunctuation: !straightQuotes, quality: options.quality, language: language)
    // Checked before the conditional answer: a text that cannot be a card is a 400 whatever
    // If-None-Match says.
    do { try cardRequest.validate() } catch { throw ServiceError.from(error) }
    // Percent-encoded parts cannot contain the separator, so different texts never share a key.
    let key =
      "text|\(options.key)|\(straightQuotes ? "straight" : "typographic")|\(language?.description ?? "-")|\(picture ?? "-")|\(percentEncoded(author))|\(percentEncoded(text))"
    return (cardRequest, options, key)
  }

  /// The `lang` parameter: a BCP 47 language tag (``LanguageTag``), or `nil` when absent.
  static func languageParameter(_ query: QueryParameters) throws -> LanguageTag? {
    guard let value = query["lang"] else { return nil }
    guard let tag = LanguageTag(value) else {
      throw ServiceError.badParameter("lang", "lang must be a BCP 47 language tag such as en, de-CH or zh-Hant")
    }
    return tag
  }

  /// A report's answer: revalidated by its tag, rendered (or found in the cache) under `key`.
  private func report(_ request: Request, _ cardRequest: CardRequest, key: String, cacheControl: String) async throws
    -> Response
  {
    let etag = service.etag(for: key)
    if let notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      return notModified
    }
    let card = try await service.card(for: cardRequest, key: key)
    guard let body = card.report else {
      throw ServiceError(.internalServerError, "the card's report could not be made")
    }
    return Response(
      status: .ok,
      headers: [
        .contentType: "application/json; charset=utf-8", .cacheControl: cacheControl, .eTag: etag,
      ],
      body: .init(byteBuffer: body))
  }

  /// `/today.png` (or `/today`): the quote of the day, the same for everyone on a date in the
  /// configured time zone, cacheable until that midnight (never past it: the date is read per
  /// request).
  func today(_ request: Request, _ query: QueryParameters, pathFormat: String?) async throws -> Response {
    let options = try CardOptions(query: query, pathFormat: pathFormat, accept: request.headers[.accept])
    let now = service.configuration.now()
    let day = DailyQuote(at: now, timeZone: service.configuration.timeZone, catalog: service.catalog)
    let etag = service.etag(
      for: "\(day.date)|\(catalogKey(quote: day.quoteIndex, picture: day.picture, options: options))")
    // Private unless the origin of its Content-Location is checked.
    let cacheControl = service.links.cacheControl("public, max-age=\(day.secondsUntilEnd(from: now))")
    let contentLocation = service.links.absolute(
      service.links.cardPath(quote: day.quoteIndex, picture: day.picture, options: options), for: request)
    if var notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      if options.negotiated { notModified.headers[.vary] = "Accept" }
      notModified.headers[.contentLocation] = contentLocation
      return notModified
    }
    let (card, _) = try await catalogCard(quote: day.quoteIndex, picture: day.picture, options: options)
    var headers = cardHeaders(card, options: options)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    headers[.contentLocation] = contentLocation
    return response(card, headers: headers)
  }

  private func pictureParameter(_ query: QueryParameters) throws -> String? {
    guard let name = query["picture"] else { return nil }
    // A picture is chosen by its catalog name only (in any Unicode normalization form, answered
    // in the catalog's spelling); nothing in a request becomes a path.
    guard let listed = try? service.catalog.pictureName(matching: name) else {
      throw ServiceError.from(.pictureUnknown(name: name))
    }
    return listed
  }

  private func catalogKey(quote: Int, picture: String, options: CardOptions) -> String {
    "quote|\(quote)|\(picture)|\(options.key)"
  }

  private func catalogCard(quote: Int, picture: String, options: CardOptions) async throws -> (ServedCard, String) {
    let key = catalogKey(quote: quote, picture: picture, options: options)
    let request = CardRequest(
      preset: options.preset, quote: .index(quote), picture: .named(picture), seed: 0, format: options.format,
      showsAuthor: options.showsAuthor, alignment: options.alignment, quality: options.quality)
    return (try await service.card(for: request, key: key), key)
  }

  private func cardHeaders(_ card: ServedCard, options: CardOptions) -> HTTPFields {
    var headers: HTTPFields = [:]
    // The same URL answers other formats to other Accept headers.
    if options.negotiated { headers[.vary] = "Accept" }
    headers[.contentType] = card.format.mediaType
    if let index = card.quoteIndex { headers[.quoteIndex] = String(index) }
    if let picture = card.picture { headers[.picture] = percentEncoded(picture) }
    headers[.fontSize] = String(card.fontSize)
    headers[.textTruncated] = card.truncated ? "true" : "false"
    headers[.missingGlyphs] = String(card.missingGlyphs)
    // Only when short: a long text's message would make a header block that proxies refuse
    // (nginx answers 502 past its 4 KiB buffer). It is always in /quotes/{index} and on the page.
    let share = percentEncoded(card.shareMessage)
    if share.utf8.count <= Self.maximumShareMessageHeaderBytes { headers[.shareMessage] = share }
    return headers
  }

  /// The longest `X-Share-Message` sent, in bytes once percent-encoded; a longer message is left
  /// out. With every other header (two URLs of at most a kilobyte each), a card's header block
  /// stays under 4 KiB, the smallest buffer common proxies use.
  static var maximumShareMessageHeaderBytes: Int { 1_024 }

  private func response(_ card: ServedCard, headers: HTTPFields) -> Response {
    Response(status: .ok, headers: headers, body: .init(byteBuffer: card.body))
  }
}

/// RFC 3986 unreserved characters stay; everything else is %XX of its UTF-8 bytes.
func percentEncoded(_ text: String) -> String {
  var result = ""
  for byte in text.utf8 {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"),
      UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
      result.unicodeScalars.append(Unicode.Scalar(byte))
    default:
      result += String(format: "%%%02X", byte)
    }
  }
  return result
}

extension HTTPField.Name {
  static let quoteIndex = HTTPField.Name("X-Quote-Index")!
  static let picture = HTTPField.Name("X-Picture")!
  static let fontSize = HTTPField.Name("X-Font-Size")!
  static let textTruncated = HTTPField.Name("X-Text-Truncated")!
  static let missingGlyphs = HTTPField.Name("X-Missing-Glyphs")!
  static let shareMessage = HTTPField.Name("X-Share-Message")!
}
