import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

/// The image endpoints: `/random`, `/cards/{quote}`, `/card`, `/today`, each as .png, .jpg or .webp.
struct CardRoutes<Renderer: CardRendering> {
  let service: CardService<Renderer>

  func add(to router: Router<BasicRequestContext>) {
    for ext in ["png", "jpg", "webp"] {
      router.get("/random.\(ext)") { request, _ in try await random(request, pathFormat: ext) }
      router.get("/card.\(ext)") { request, _ in try await custom(request, pathFormat: ext) }
      router.get("/today.\(ext)") { request, _ in try await today(request, pathFormat: ext) }
    }
    router.get("/cards/:file") { request, context in
      try await stable(request, file: context.parameters.get("file") ?? "")
    }
  }

  // MARK: Endpoints

  /// A random card: uncacheable, naming the quote and picture it chose and its stable URL.
  func random(_ request: Request, pathFormat: String) async throws -> Response {
    let query = try QueryParameters(raw: request.uri.query.map { Substring($0) } ?? "")
    let options = try CardOptions(query: query, pathFormat: pathFormat)
    let seed: UInt64
    if let text = query["seed"] {
      guard let value = UInt64(text) else {
        throw ServiceError.badParameter("seed", "seed must be a whole number from 0 to \(UInt64.max)")
      }
      seed = value
    } else {
      seed = UInt64.random(in: .min ... .max)
    }
    let choice = service.catalog.randomChoice(seed: seed)
    let (card, key) = try await catalogCard(quote: choice.quoteIndex, picture: choice.picture, options: options)
    var headers = cardHeaders(card)
    headers[.cacheControl] = "no-store"
    headers[.contentLocation] = service.links.absolute(
      service.links.cardPath(quote: choice.quoteIndex, picture: choice.picture, options: options), for: request)
    headers[.eTag] = service.etag(for: key)
    return response(card, headers: headers)
  }

  /// `/cards/{quote}.{ext}?picture=&preset=&v=`: a stable card, immutable when `v` is the current
  /// content version; without it (or with an old one) cacheable for minutes, then revalidated.
  func stable(_ request: Request, file: String) async throws -> Response {
    let parts = file.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, let index = Int(parts[0]), String(index) == parts[0] else {
      throw ServiceError(.notFound, "no such card: use /cards/{quote}.png, .jpg or .webp")
    }
    guard ["png", "jpg", "webp"].contains(parts[1]) else {
      throw ServiceError(.notFound, "no such card format: use .png, .jpg or .webp")
    }
    let query = try QueryParameters(raw: request.uri.query.map { Substring($0) } ?? "")
    let options = try CardOptions(query: query, pathFormat: String(parts[1]))
    guard service.catalog.quotes.indices.contains(index) else {
      throw ServiceError.from(.quoteIndexOutOfRange(index: index, count: service.catalog.quotes.count))
    }
    let picture = try pictureParameter(query) ?? service.catalog.pictures[index % service.catalog.pictures.count]
    let key = catalogKey(quote: index, picture: picture, options: options)
    let etag = service.etag(for: key)
    let cacheControl = service.links.cacheControl(forVersion: query["v"])
    if let notModified = notModified(request, etag: etag, cacheControl: cacheControl) { return notModified }
    let (card, _) = try await catalogCard(quote: index, picture: picture, options: options)
    var headers = cardHeaders(card)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    headers[.contentLocation] = service.links.absolute(
      service.links.cardPath(quote: index, picture: picture, options: options), for: request)
    return response(card, headers: headers)
  }

  /// `/card.png?text=&author=`: any text, within ``InnerPeace/Limits``.
  func custom(_ request: Request, pathFormat: String) async throws -> Response {
    let query = try QueryParameters(raw: request.uri.query.map { Substring($0) } ?? "")
    // Here `author` is the author's name, not the on/off switch of the other endpoints.
    let options = try CardOptions(query: query, pathFormat: pathFormat, authorIsSwitch: false)
    guard let text = query["text"] else { throw ServiceError.badParameter("text", "text is required") }
    guard text.count <= Limits.maximumTextCharacters, text.utf8.count <= Limits.maximumTextBytes else {
      throw ServiceError(
        .contentTooLarge, parameter: "text",
        "text is \(text.count) characters; the limit is \(Limits.maximumTextCharacters) (and \(Limits.maximumTextBytes) bytes)"
      )
    }
    let author = query["author"] ?? ""
    let picture = try pictureParameter(query)
    let straightQuotes: Bool
    switch query["straightQuotes"] {
    case nil, "false", "0", "no": straightQuotes = false
    case "true", "1", "yes": straightQuotes = true
    case let other?:
      throw ServiceError.badParameter("straightQuotes", "straightQuotes is true or false, not '\(other)'")
    }
    let seed: UInt64 = picture == nil ? UInt64(truncatingIfNeeded: StableHash.of(text)) : 0
    let cardRequest = CardRequest(
      preset: options.preset, quote: .text(text, author: author), picture: picture.map { .named($0) } ?? .random,
      seed: seed, format: options.format, showsAuthor: options.showsAuthor, alignment: options.alignment,
      typographicPunctuation: !straightQuotes)
    // Percent-encoded parts cannot contain the separator, so different texts never share a key.
    let key =
      "text|\(options.key)|\(straightQuotes ? "straight" : "typographic")|\(picture ?? "-")|\(percentEncoded(author))|\(percentEncoded(text))"
    let etag = service.etag(for: key)
    let cacheControl = "public, max-age=86400"
    if let notModified = notModified(request, etag: etag, cacheControl: cacheControl) { return notModified }
    let card = try await service.card(for: cardRequest, key: key)
    var headers = cardHeaders(card)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    return response(card, headers: headers)
  }

  /// `/today.png`: the quote of the day, the same for everyone on a date in the configured time
  /// zone, cacheable until that midnight (never past it: the date is read per request).
  func today(_ request: Request, pathFormat: String) async throws -> Response {
    let query = try QueryParameters(raw: request.uri.query.map { Substring($0) } ?? "")
    let options = try CardOptions(query: query, pathFormat: pathFormat)
    let now = service.configuration.now()
    let day = DailyQuote(at: now, timeZone: service.configuration.timeZone, catalog: service.catalog)
    let etag = service.etag(
      for: "\(day.date)|\(catalogKey(quote: day.quoteIndex, picture: day.picture, options: options))")
    let cacheControl = "public, max-age=\(day.secondsUntilEnd(from: now))"
    if let notModified = notModified(request, etag: etag, cacheControl: cacheControl) { return notModified }
    let (card, _) = try await catalogCard(quote: day.quoteIndex, picture: day.picture, options: options)
    var headers = cardHeaders(card)
    headers[.cacheControl] = cacheControl
    headers[.eTag] = etag
    headers[.contentLocation] = service.links.absolute(
      service.links.cardPath(quote: day.quoteIndex, picture: day.picture, options: options), for: request)
    return response(card, headers: headers)
  }

  // MARK: Helpers

  private func pictureParameter(_ query: QueryParameters) throws -> String? {
    guard let name = query["picture"] else { return nil }
    // A picture is chosen by its catalog name only; nothing in a request becomes a path.
    guard service.catalog.pictures.contains(name) else { throw ServiceError.from(.pictureUnknown(name: name)) }
    return name
  }

  private func catalogKey(quote: Int, picture: String, options: CardOptions) -> String {
    "quote|\(quote)|\(picture)|\(options.key)"
  }

  private func catalogCard(quote: Int, picture: String, options: CardOptions) async throws -> (ServedCard, String) {
    let key = catalogKey(quote: quote, picture: picture, options: options)
    let request = CardRequest(
      preset: options.preset, quote: .index(quote), picture: .named(picture), seed: 0, format: options.format,
      showsAuthor: options.showsAuthor, alignment: options.alignment)
    return (try await service.card(for: request, key: key), key)
  }

  /// 304 for a matching `If-None-Match` (weak comparison, as RFC 9110 asks for it).
  private func notModified(_ request: Request, etag: String, cacheControl: String) -> Response? {
    guard let header = request.headers[.ifNoneMatch] else { return nil }
    let tags = header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    let matches =
      tags.contains("*")
      || tags.contains { tag in
        (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
      }
    guard matches else { return nil }
    return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: cacheControl])
  }

  private func cardHeaders(_ card: ServedCard) -> HTTPFields {
    var headers: HTTPFields = [:]
    headers[.contentType] = card.format.mediaType
    headers[.contentLength] = String(card.byteCount)
    if let index = card.quoteIndex { headers[.quoteIndex] = String(index) }
    if let picture = card.picture { headers[.picture] = picture }
    headers[.fontSize] = String(card.fontSize)
    headers[.textTruncated] = card.truncated ? "true" : "false"
    headers[.missingGlyphs] = String(card.missingGlyphs)
    headers[.shareMessage] = percentEncoded(card.shareMessage)
    return headers
  }

  private func response(_ card: ServedCard, headers: HTTPFields) -> Response {
    Response(status: .ok, headers: headers, body: .init(byteBuffer: card.body))
  }
}

/// The card options every image endpoint takes: preset (or w and h), format, align, author.
struct CardOptions {
  var preset: Preset = .og
  var format: ImageFormat = .png
  var alignment: TextAlignment = .natural
  var showsAuthor = true

  /// The defaults: og, PNG, natural alignment, with the author.
  init() {}

  /// The part of a cache key these options decide.
  var key: String { "\(preset)|\(format.rawValue)|\(alignment.rawValue)|\(showsAuthor)" }

  init(query: QueryParameters, pathFormat: String, authorIsSwitch: Bool = true) throws(ServiceError) {
    let width = query["w"]
    let height = query["h"]
    if width != nil || height != nil {
      guard query["preset"] == nil else {
        throw .badParameter("preset", "use either preset or w and h, not both")
      }
      guard let width, let height else {
        throw .badParameter(width == nil ? "w" : "h", "w and h go together")
      }
      for (name, value) in [("w", width), ("h", height)] {
        guard let number = Int(value) else { throw .badParameter(name, "\(name) must be a whole number of pixels") }
        guard (Limits.minimumSide...Limits.maximumSide).contains(number) else {
          throw .badParameter(name, "\(name) must be from \(Limits.minimumSide) to \(Limits.maximumSide) pixels")
        }
      }
      do {
        preset = .custom(try CanvasSize(width: Int(width)!, height: Int(height)!))
      } catch {
        throw .badParameter("w", error.description)
      }
    } else if let name = query["preset"] {
      do {
        preset = try Preset(parsing: name)
      } catch {
        throw .badParameter("preset", error.description)
      }
    }
    let pathFormat = try! ImageFormat(parsing: pathFormat)
    if let name = query["format"] {
      guard let chosen = try? ImageFormat(parsing: name) else {
        throw .badParameter("format", "unknown format '\(name)': use png, jpeg or webp")
      }
      guard chosen == pathFormat || pathFormat == .png else {
        throw .badParameter("format", "format=\(name) contradicts the .\(pathFormat.fileExtension) in the path")
      }
      format = chosen
    } else {
      format = pathFormat
    }
    switch query["align"] {
    case nil, "natural": alignment = .natural
    case "center", "centre": alignment = .center
    case let other?: throw .badParameter("align", "unknown alignment '\(other)': use natural or center")
    }
    if authorIsSwitch {
      switch query["author"] {
      case "false", "0", "no": showsAuthor = false
      default: showsAuthor = true
      }
    }
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
