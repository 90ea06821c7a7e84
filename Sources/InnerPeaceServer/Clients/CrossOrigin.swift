import HTTPTypes
import Hummingbird

/// Which other origins' pages may read the service's cards, quotes and feeds with `fetch()`
/// (`--cors-origin`): any (`*`) or those listed, each `scheme://host[:port]`.
package struct CrossOriginPolicy: Sendable {
  /// `nil`: any origin (`*`); else the origins listed, lowercased, without a trailing `/`.
  let listed: Set<String>?

  /// The policy of `origins` (the configured values); `nil` for none, CORS off.
  /// - Throws: ``ServerConfigurationError`` naming the first origin that is not one.
  init?(origins: [String]) throws(ServerConfigurationError) {
    guard !origins.isEmpty else { return nil }
    if origins.contains("*") {
      guard origins.count == 1 else { throw .init("--cors-origin '*' allows every origin: give it alone") }
      listed = nil
      return
    }
    var listed: Set<String> = []
    for origin in origins { listed.insert(try Self.normalised(origin)) }
    self.listed = listed
  }

  /// `origin` as browsers send it in `Origin`: lowercased, without a trailing `/`.
  /// - Throws: ``ServerConfigurationError`` unless it is `scheme://host[:port]`.
  static func normalised(_ origin: String) throws(ServerConfigurationError) -> String {
    let problem = ServerConfigurationError(
      "--cors-origin '\(origin)' must be an origin such as https://www.example.com (scheme://host[:port], no path)")
    let trimmed = (origin.hasSuffix("/") ? String(origin.dropLast()) : origin).lowercased()
    let parts = trimmed.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, let first = parts[0].utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
      parts[0].utf8.allSatisfy({ byte in
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
          || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
      }), CardLinks.isValidHost(String(parts[1])), !parts[1].hasPrefix(":"), !parts[1].hasSuffix(":")
    else { throw problem }
    return trimmed
  }

  /// The `Access-Control-Allow-Origin` for a request from `origin`: `*` for any, the origin
  /// itself when listed, else `nil` (no CORS headers: the browser keeps the response from the page).
  func allowedOrigin(_ origin: String?) -> String? {
    guard let listed else { return "*" }
    guard let origin, listed.contains(origin.lowercased()) else { return nil }
    return origin
  }

  /// Whether the answer depends on `Origin` (a list), so caches must keep one copy per origin.
  var variesByOrigin: Bool { listed != nil }

  /// The request headers a page may send (`Access-Control-Allow-Headers`): revalidation, content
  /// negotiation and tracing, beyond the CORS-safelisted ones.
  static let allowedHeaders =
    "Accept, Accept-Language, If-None-Match, If-Modified-Since, X-Request-Id, traceparent, tracestate"

  /// The response headers a page may read (`Access-Control-Expose-Headers`), beyond the
  /// CORS-safelisted ones (Cache-Control, Content-Type, Content-Length, Expires, Last-Modified).
  static let exposedHeaders =
    "ETag, Content-Location, Link, Retry-After, Vary, X-Quote-Index, X-Picture, X-Font-Size, X-Text-Truncated, "
    + "X-Missing-Glyphs, X-Share-Message, X-Request-Id"

  /// How long a browser may keep a preflight's answer, in seconds (Chromium keeps at most 7200).
  static let preflightMaxAge = "86400"
}

extension RouteTable.Route {
  /// Whether pages of other origins may read the route (under ``CrossOriginPolicy``): the
  /// cards, the quotes and the feeds; not the page, the service's own files, health or metrics.
  var allowsCrossOrigin: Bool {
    switch kind {
    case .image, .negotiatedImage: true
    case .json, .text: ([.listQuotes, .getQuote, .feed, .calendar] as Set<RouteTable.Operation>).contains(operation)
    }
  }
}

/// Cross-origin resource sharing for the routes that allow it (``RouteTable/Route/allowsCrossOrigin``).
/// Hummingbird's `CORSMiddleware` is not used: it applies to every route, answers any `OPTIONS`
/// (even for a path the service does not have, or an origin not allowed) with a 204, and adds
/// `Vary: Origin` only to responses to requests that carried an `Origin`, so a shared cache could
/// hand a response made for a same-origin request, without `Access-Control-Allow-Origin`, to a page
/// of a listed origin.
///
/// On such a route: a preflight (`OPTIONS` with an allowed `Origin` and
/// `Access-Control-Request-Method: GET` or `HEAD`) is a 204 with the allowed methods and headers
/// and a max age; any other `OPTIONS` goes on to the router and is a 405, as without CORS (a
/// browser fails the preflight, status and headers both saying no). Every other response,
/// 304s and JSON errors included, gets `Access-Control-Allow-Origin` and
/// `Access-Control-Expose-Headers` for an allowed origin, and, with a list of origins,
/// `Vary: Origin` whatever the request.
struct CrossOriginMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext
  let policy: CrossOriginPolicy

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    guard let route = RouteTable.knownRoute(request.uri.path), route.allowsCrossOrigin else {
      return try await next(request, context)
    }
    let allowed = policy.allowedOrigin(request.headers[.origin])
    if request.method == .options, let allowed,
      let method = request.headers[.accessControlRequestMethod], method == "GET" || method == "HEAD"
    {
      var headers: HTTPFields = [
        .accessControlAllowOrigin: allowed, .accessControlAllowMethods: "GET, HEAD, OPTIONS",
        .accessControlAllowHeaders: CrossOriginPolicy.allowedHeaders,
        .accessControlMaxAge: CrossOriginPolicy.preflightMaxAge,
      ]
      if policy.variesByOrigin { headers[.vary] = "Origin" }
      return Response(status: .noContent, headers: headers)
    }
    var response = try await next(request, context)
    if let allowed {
      response.headers[.accessControlAllowOrigin] = allowed
      response.headers[.accessControlExposeHeaders] = CrossOriginPolicy.exposedHeaders
    }
    if policy.variesByOrigin { response.headers.addVary("Origin") }
    return response
  }
}
