import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

/// JSON about the catalog, health, metrics, the API description and the page. The router
/// registers them from ``Routes/all``.
struct InfoRoutes<Renderer: CardRendering> {
  let service: CardService<Renderer>

  /// `/quotes`
  func quotes(_ request: Request) throws -> Response {
    try json(service.catalog.quotes.indices.map { quoteObject($0, request: request) })
  }

  /// `/quotes/{index}`
  func quote(_ text: String, _ request: Request) throws -> Response {
    guard let index = Int(text), String(index) == text, service.catalog.quotes.indices.contains(index) else {
      throw ServiceError(
        .notFound, parameter: "index", "no quote '\(text)': the catalog has \(service.catalog.quotes.count)")
    }
    return try json(quoteObject(index, request: request))
  }

  /// `/healthz`
  func health() throws -> Response {
    try json(Health(status: "ok", quotes: service.catalog.quotes.count, pictures: service.catalog.pictures.count))
  }

  /// `/metrics`
  func metrics() -> Response {
    Response(
      status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
      body: .init(byteBuffer: ByteBuffer(bytes: service.metrics.exposition())))
  }

  /// `/openapi.yaml`: the resource file `Resources/openapi.yaml`.
  func openAPI() throws -> Response {
    guard let yaml = OpenAPIDocument.yaml else {
      throw ServiceError(.internalServerError, "the API description is not installed")
    }
    return text(yaml, type: "application/yaml; charset=utf-8", cacheControl: "public, max-age=3600")
  }

  /// One quote as the API describes it: index, text, author, share message and the absolute,
  /// versioned URL of its og card.
  private func quoteObject(_ index: Int, request: Request) -> QuoteResponse {
    let quote = service.catalog.quotes[index]
    let picture = service.catalog.pictures[index % service.catalog.pictures.count]
    let links = service.links
    return QuoteResponse(
      index: index, text: quote.text, author: quote.author, shareMessage: quote.shareMessage,
      imageURL: links.absolute(links.cardPath(quote: index, picture: picture, options: CardOptions()), for: request),
      pageURL: links.absolute(links.quotePagePath(index), for: request))
  }

  private func json(_ value: some Encodable) throws -> Response {
    let data = try ServiceJSON.encode(value)
    return Response(
      status: .ok, headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(data.count)],
      body: .init(byteBuffer: ByteBuffer(bytes: data)))
  }

  private func text(_ body: String, type: String, cacheControl: String) -> Response {
    let buffer = ByteBuffer(string: body)
    return Response(
      status: .ok,
      headers: [.contentType: type, .contentLength: String(buffer.readableBytes), .cacheControl: cacheControl],
      body: .init(byteBuffer: buffer))
  }
}

/// `/quotes/{index}` and each entry of `/quotes`.
struct QuoteResponse: Codable, Sendable {
  let index: Int
  let text: String
  let author: String
  let shareMessage: String
  /// The absolute, versioned URL of the quote's og card.
  let imageURL: String
  /// The absolute URL of the quote's page (link previews).
  let pageURL: String
}

/// `/healthz`.
struct Health: Codable, Sendable {
  let status: String
  let quotes: Int
  let pictures: Int
}

/// The service's one JSON encoder: sorted keys, slashes as they are.
enum ServiceJSON {
  static func encode(_ value: some Encodable) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(value)
  }
}
