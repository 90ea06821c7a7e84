import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
import NIOCore

/// JSON about the catalog, health, readiness, metrics and the API description.
struct InfoController<Renderer: CardRendering> {
  let service: CardService<Renderer>

  /// Registers the endpoints' routes from ``RouteTable``.
  func addRoutes(to router: some RouterMethods<BasicRequestContext>) {
    let configuration = service.configuration
    router.get(.listQuotes, configuration: configuration) { request, _, match in
      try await quotes(request, match.query)
    }
    router.get(.getQuote, configuration: configuration) { request, context, _ in
      try quote(context.parameters.get("index") ?? "", request)
    }
    router.get(.health, configuration: configuration) { _, _, _ in try health() }
    router.get(.readiness, configuration: configuration) { _, _, _ in try readiness() }
    // With a metrics address, /metrics is served on that listener only (``MetricsListener``).
    if configuration.metricsAddress == nil {
      router.get(.metrics, configuration: configuration) { _, _, _ in metrics() }
    }
    router.get(.openAPI, configuration: configuration) { _, _, _ in try openAPI() }
  }

  /// Quotes in a page of `/quotes` when `limit` is not given.
  static var defaultPageSize: Int { 1_000 }
  /// The largest `limit`.
  static var maximumPageSize: Int { 1_000 }

  /// `/quotes?offset=&limit=`: a page of the catalog, a JSON array of quote objects, with a
  /// `Link: <...>; rel="next"` header while quotes remain. Each page is encoded once per origin
  /// (and catalog: the version is in its key) off the event loop and kept (``QuoteListCache``);
  /// it carries an ETag, and `If-None-Match` gets a 304 without encoding anything.
  func quotes(_ request: Request, _ query: QueryParameters) async throws -> Response {
    let count = service.catalog.quotes.count
    let limit = try query.wholeNumber("limit", in: 1...Self.maximumPageSize) ?? Self.defaultPageSize
    let requestedOffset = try query.wholeNumber("offset", in: 0...Int.max) ?? 0
    let offset = min(requestedOffset, count)
    let end = offset + min(limit, count - offset)
    let links = service.links
    let origin = links.origin(of: request)
    let key = "quotes|\(origin)|\(offset)|\(end)"
    let etag = service.etag(for: key)
    let cacheControl = links.cacheControl("public, max-age=300")
    // Relative, so that no host is in it.
    let next = end < count ? "</quotes?offset=\(end)&limit=\(limit)>; rel=\"next\"" : nil
    if var notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      notModified.headers[.link] = next
      return notModified
    }
    // Encoded on a thread outside the request's task: with the request's catalog pinned there too.
    let generation = service.generation
    let body = try await generation.quoteLists.page(key: key) { [self] in
      try PinnedCatalog.$generation.withValue(generation) {
        try ServiceJSON.encode((offset..<end).map { quoteObject($0, origin: origin) })
      }
    }
    var headers: HTTPFields = [
      .contentType: "application/json; charset=utf-8", .eTag: etag, .cacheControl: cacheControl,
    ]
    headers[.link] = next
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
  }

  /// `/quotes/{index}`
  func quote(_ text: String, _ request: Request) throws -> Response {
    guard let index = WholeNumber(text)?.value, service.catalog.quotes.indices.contains(index) else {
      throw ServiceError(
        .notFound, parameter: "index", "no quote '\(text)': the catalog has \(service.catalog.quotes.count)")
    }
    var response = try json(quoteObject(index, origin: service.links.origin(of: request)))
    response.headers[.cacheControl] = service.links.cacheControl("public, max-age=300")
    return response
  }

  /// `/healthz`
  func health() throws -> Response {
    try json(Health(status: "ok", quotes: service.catalog.quotes.count, pictures: service.catalog.pictures.count))
  }

  /// `/readyz`: 200 when the catalog is loaded and a render worker is ready, else 503 with the
  /// reason (``Readiness``); never cached.
  func readiness() throws -> Response {
    let readiness = Readiness(
      readyWorkers: service.pool.readyWorkers, quotes: service.catalog.quotes.count,
      contentVersion: service.contentVersion)
    var response = try json(readiness)
    response.status = readiness.isReady ? .ok : .serviceUnavailable
    response.headers[.cacheControl] = "no-store"
    return response
  }

  /// `/metrics`
  func metrics() -> Response { MetricsListener.response(service.metrics) }

  /// `/openapi.yaml`: the resource file `Resources/openapi.yaml`.
  func openAPI() throws -> Response {
    guard let yaml = OpenAPIDocument.yaml else {
      throw ServiceError(.internalServerError, "the API description is not installed")
    }
    return text(yaml, type: "application/yaml; charset=utf-8", cacheControl: "public, max-age=3600")
  }

  /// One quote as the API describes it: index, text, author, share message and the absolute,
  /// versioned URL of its og card.
  private func quoteObject(_ index: Int, origin: String) -> QuoteResponse {
    let quote = service.catalog.quotes[index]
    let picture = service.catalog.picture(forQuote: index)
    let links = service.links
    return QuoteResponse(
      index: index, text: quote.text, author: quote.author, shareMessage: quote.shareMessage,
      imageURL: origin + links.cardPath(quote: index, picture: picture, options: CardOptions()),
      pageURL: origin + links.quotePagePath(index))
  }

  private func json(_ value: some Encodable) throws -> Response {
    let data = try ServiceJSON.encode(value)
    return Response(
      status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
      body: .init(byteBuffer: ByteBuffer(bytes: data)))
  }

  private func text(_ body: String, type: String, cacheControl: String) -> Response {
    let buffer = ByteBuffer(string: body)
    return Response(
      status: .ok,
      headers: [.contentType: type, .cacheControl: cacheControl],
      body: .init(byteBuffer: buffer))
  }
}

extension HTTPField.Name {
  /// RFC 8288.
  static let link = HTTPField.Name("Link")!
}
