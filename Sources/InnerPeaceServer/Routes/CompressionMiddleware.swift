import HTTPTypes
import Hummingbird
import NIOCore

/// Sends the bodies of the text and JSON endpoints that gain from it (``RouteTable/Route/compresses``:
/// `/quotes`, the feeds, the pages, the reports, `/openapi.yaml`; never an image) gzip-compressed
/// to a client whose `Accept-Encoding` admits gzip (``EncodingNegotiation``), with
/// `Content-Encoding: gzip`.
///
/// The compressed body is another representation, so it has its own strong ETag: the identity
/// tag with `-gzip` before its closing quote (`"abc"` → `"abc-gzip"`). Its `If-None-Match` is
/// compared with that tag only: the handler is given the identity tags the gzip tags stand for
/// (and none of the identity tags, which name the other representation), so its 304 (made before
/// anything is rendered or encoded) is for the representation the client would get; the 304
/// carries the gzip tag. Every response of these routes, compressed or not, 304 included, carries
/// `Vary: Accept-Encoding`, so that a shared cache keeps the two apart.
struct CompressionMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext
  let bodies: GzipBodies

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    guard let endpoint = context.endpointPath, RouteTable.route(forEndpoint: endpoint)?.compresses == true else {
      return try await next(request, context)
    }
    guard EncodingNegotiation.acceptsGzip(request.headers[.acceptEncoding]) else {
      var response = try await next(request, context)
      response.headers.addVary("Accept-Encoding")
      return response
    }
    var head = request.head
    if let condition = request.headers[.ifNoneMatch] {
      head.headerFields[.ifNoneMatch] = Self.identityTags(standingFor: condition)
    }
    var response = try await next(Request(head: head, body: request.body), context)
    response.headers.addVary("Accept-Encoding")
    let etag = response.headers[.eTag]
    if let etag { response.headers[.eTag] = Self.gzipTag(etag) }
    guard response.status == .ok else { return response }
    let identity = try await Self.collect(response.body)
    guard let compressed = bodies.compressed(identity, etag: etag) else {
      throw ServiceError(.internalServerError, "internal error")
    }
    response.headers[.contentEncoding] = "gzip"
    response.headers[.contentLength] = nil
    response.body = ResponseBody(byteBuffer: compressed)
    return response
  }

  /// `"abc"` → `"abc-gzip"`, `W/"abc"` → `W/"abc-gzip"`.
  static func gzipTag(_ etag: String) -> String {
    guard etag.hasSuffix("\"") else { return etag }
    return etag.dropLast() + Self.suffix + "\""
  }

  /// An `If-None-Match` value as the handler compares it when the response is to be compressed:
  /// `*` stays, each gzip tag becomes the identity tag it was made from, and identity tags are
  /// left out; `nil` when nothing is left (no tag can match).
  static func identityTags(standingFor condition: String) -> String? {
    let tags = condition.split(separator: ",").compactMap { part -> String? in
      let tag = part.trimmingCharacters(in: .whitespaces)
      if tag == "*" { return tag }
      guard tag.hasSuffix(Self.suffix + "\"") else { return nil }
      return tag.dropLast(Self.suffix.count + 1) + "\""
    }
    return tags.isEmpty ? nil : tags.joined(separator: ", ")
  }

  /// What the ETag of a gzip body adds before the closing quote.
  static let suffix = "-gzip"

  /// The bytes of a body (these routes answer one buffer, read from memory).
  private static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
    let collector = Collector()
    try await body.write(collector)
    return collector.buffer
  }

  /// A body writer that keeps what is written.
  private final class Collector: ResponseBodyWriter {
    var buffer = ByteBuffer()
    func write(_ part: ByteBuffer) async throws {
      var part = part
      buffer.writeBuffer(&part)
    }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
  }
}
