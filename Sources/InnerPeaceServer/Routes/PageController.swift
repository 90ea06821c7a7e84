import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
import NIOCore

/// The HTML pages: `/` and `/q/today` (the quote of the day) and `/q/{quote}`, each showing
/// its card full screen with the link-preview tags chat apps and social networks read; and the
/// favicon.
struct PageController<Renderer: CardRendering> {
  let service: CardService<Renderer>

  /// Registers the pages' and icons' routes from ``RouteTable``.
  func addRoutes(to router: some RouterMethods<BasicRequestContext>) {
    let configuration = service.configuration
    router.get(.page, configuration: configuration) { request, _, _ in
      // The page asks for cards of any size: it cannot sign them.
      guard !configuration.signsAllImages else {
        throw ServiceError(.notFound, "no page: this server answers signed image URLs only")
      }
      return try today(request, path: "/")
    }
    router.get(.todayPage, configuration: configuration) { request, _, _ in try today(request, path: "/q/today") }
    router.get(.quotePage, configuration: configuration) { request, context, _ in
      try quote(request, context.parameters.get("quote") ?? "")
    }
    router.get(.faviconSVG, configuration: configuration) { _, _, _ in try faviconSVG() }
    router.get(.faviconICO, configuration: configuration) { _, _, _ in try faviconICO() }
  }

  /// `/` and `/q/today`: today's quote in the configured time zone.
  func today(_ request: Request, path: String) throws -> Response {
    let now = service.configuration.now()
    let day = DailyQuote(at: now, timeZone: service.configuration.timeZone, catalog: service.catalog)
    let links = service.links
    let quote = service.catalog.quotes[day.quoteIndex]
    let content = WebPage.Content(
      title: "Inner Peace: the quote of the day", description: quote.shareMessage,
      url: links.absolute(path, for: request),
      image: ogImage(quote: day.quoteIndex, picture: day.picture, request: request),
      imageAlt: quote.shareMessage, firstCard: firstCard("/today"),
      firstPage: links.quotePagePath(day.quoteIndex))
    return try page(content, maxAge: min(300, day.secondsUntilEnd(from: now)))
  }

  /// `/q/{quote}`: one catalog quote.
  func quote(_ request: Request, _ text: String) throws -> Response {
    guard let index = WholeNumber(text)?.value, service.catalog.quotes.indices.contains(index) else {
      return try notFound(request, "no quote '\(text)': the catalog has \(service.catalog.quotes.count)")
    }
    let links = service.links
    let quote = service.catalog.quotes[index]
    let picture = service.catalog.picture(forQuote: index)
    let content = WebPage.Content(
      title: "Inner Peace: a quote by \(quote.author.isEmpty ? "an unknown author" : quote.author)",
      description: quote.shareMessage, url: links.absolute(links.quotePagePath(index), for: request),
      image: ogImage(quote: index, picture: picture, request: request), imageAlt: quote.shareMessage,
      firstCard: firstCard("/cards/\(index)?picture=\(percentEncoded(picture))"),
      firstPage: links.quotePagePath(index))
    return try page(content, maxAge: 300)
  }

  /// The absolute, versioned og card: a JPEG of 1200x630.
  private func ogImage(quote: Int, picture: String, request: Request) -> String {
    var options = CardOptions()
    options.format = .jpeg
    return service.links.absolute(
      service.links.cardPath(quote: quote, picture: picture, options: options), for: request)
  }

  /// The card the script opens on, before it adds the window's size; none when every image URL
  /// must be signed (the page then shows its og card, which the service signed).
  private func firstCard(_ path: String) -> String { service.configuration.signsAllImages ? "" : path }

  private func page(_ content: WebPage.Content, maxAge: Int) throws -> Response {
    let assets = try PageAssets.bundled()
    let buffer = ByteBuffer(string: WebPage.html(content, assets: assets))
    return Response(
      status: .ok,
      headers: [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: service.links.cacheControl("public, max-age=\(maxAge)"),
        .contentSecurityPolicy: assets.contentSecurityPolicy(publicURL: service.links.publicURL),
        .xContentTypeOptions: "nosniff", .referrerPolicy: "strict-origin-when-cross-origin",
      ],
      body: .init(byteBuffer: buffer))
  }

  /// A 404: a short HTML page for a browser, else the JSON error.
  private func notFound(_ request: Request, _ message: String) throws -> Response {
    guard request.headers[.accept]?.contains("text/html") == true else {
      throw ServiceError(.notFound, parameter: "quote", message)
    }
    let html = """
      <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found: Inner Peace</title>
      <meta name="viewport" content="width=device-width, initial-scale=1"></head>
      <body style="background:#000;color:#fff;font:18px/1.4 system-ui,sans-serif;margin:2em">
      <p>\(Markup.escaped(message)).</p><p><a style="color:#fff" href="/">Today\u{2019}s quote</a></p></body></html>
      """
    let buffer = ByteBuffer(string: html)
    return Response(
      status: .notFound,
      headers: [
        .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
        .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
      ],
      body: .init(byteBuffer: buffer))
  }

  // MARK: Favicon

  /// `/favicon.svg`: a white quotation mark on the app's dark green.
  func faviconSVG() throws -> Response {
    file(try PageAssets.bundled().faviconSVG, type: "image/svg+xml")
  }

  /// `/favicon.ico`: the same at 32x32, a PNG inside an ICO.
  func faviconICO() throws -> Response {
    file(try PageAssets.bundled().faviconICO, type: "image/x-icon")
  }

  private func file(_ data: Data, type: String) -> Response {
    Response(
      status: .ok,
      headers: [.contentType: type, .cacheControl: "public, max-age=86400"],
      body: .init(byteBuffer: ByteBuffer(bytes: data)))
  }
}

extension HTTPField.Name {
  static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
  static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
  static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
