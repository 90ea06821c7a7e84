import Hummingbird
import InnerPeace

/// What a route's handler is given besides the request and its context: its route, its query
/// (decoded, names and any signature checked) and the extension its path names.
struct RouteMatch: Sendable {
  let route: RouteTable.Route
  let query: QueryParameters
  /// The path's `.{format}` as written (`png`, `jpg`, `jpeg`, `webp` or `avif`); `nil` for a path without one.
  let pathFormat: String?
}

extension RouterMethods {
  /// Registers the route of `operation` from ``RouteTable``, once per format its path may name (so
  /// each request is labelled by its template). Before `handler` answers, the query is decoded (not
  /// for a route taking any query: the page ignores even a stray `%`), its signature and names
  /// checked. A path with an empty segment (Hummingbird's router skips them) is a 404.
  @discardableResult
  func get(
    _ operation: RouteTable.Operation, configuration: ServerConfiguration,
    _ handler: @escaping @Sendable (Request, Context, RouteMatch) async throws -> Response
  ) -> Self {
    let route = RouteTable.route(operation)
    for (path, format) in route.registrations {
      on(path, method: .get) { request, context in
        guard RouteTable.hasNoEmptySegment(request.uri.path) else { throw HTTPError(.notFound) }
        let rawQuery = request.uri.query.map { Substring($0) } ?? ""
        let query = try QueryParameters(raw: route.query == nil ? "" : rawQuery)
        try RouteTable.checkSignature(query, rawQuery: rawQuery, path: request.uri.path, for: route, configuration)
        try RouteTable.checkQuery(query, for: route)
        var response = try await handler(request, context, RouteMatch(route: route, query: query, pathFormat: format))
        // A signed URL that expires is cached no longer than it lives (its signature, checked
        // above, covers `expires`).
        if RouteTable.needsSignature(route, configuration), let expires = query["expires"].flatMap({ Int($0) }),
          let cacheControl = response.headers[.cacheControl]
        {
          let left = expires - Int(configuration.now().timeIntervalSince1970)
          response.headers[.cacheControl] = SigningKeys.cacheControl(cacheControl, expiringIn: left)
        }
        return response
      }
    }
    return self
  }
}

extension Parameters {
  /// The path parameter `name` as a ``InnerPeace/WholeNumber`` (a catalog index).
  /// - Throws: ``ServiceError`` (404) naming the parameter, with `message`, for anything else.
  func wholeNumber(_ name: String, orNotFound message: @autoclosure () -> String) throws(ServiceError) -> Int {
    do {
      return try require(name, as: WholeNumber.self).value
    } catch {
      throw ServiceError(.notFound, parameter: name, message())
    }
  }
}
