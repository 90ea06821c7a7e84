import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// One structured log line and one metrics count per request, with the final status, both
/// labelled by the template of the route the request matched (``RouteTable/template(forEndpoint:)``:
/// `/cards/{quote}.{format}`, `/cards/{quote}`, `/random.{format}`), or ``unmatchedLabel``: never
/// by the raw path, so the label set stays bounded.
struct RequestLogMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext
  let metrics: ServerMetrics

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    let started = ContinuousClock.now
    // Known before the responder runs when the router has matched: a request the connection
    // gives up on before its answer (a body too slow) is still logged with its route.
    let matched = context.endpointPath.flatMap(RouteTable.template(forEndpoint:))
    if let matched { RequestRecord.current?.route = matched }
    let response = try await next(request, context)
    let elapsed = ContinuousClock.now - started
    let route = matched ?? Self.unmatchedLabel
    metrics.recordRequest(route: route, status: response.status.code, duration: elapsed)
    if let record = RequestRecord.current {
      // On a live connection the line is written once the last byte is in the socket, with the
      // bytes actually written (see ConnectionGuard).
      record.route = route
      return response
    }
    let milliseconds = elapsed / .milliseconds(1)
    context.logger.info(
      "request",
      metadata: [
        "method": .string(request.method.rawValue), "path": .string(request.uri.path), "route": .string(route),
        "status": .stringConvertible(response.status.code), "ms": .string(String(format: "%.1f", milliseconds)),
        "bytes": .string(response.headers[.contentLength] ?? "-"),
      ])
    return response
  }

  /// The label of a request the router matched no route for (or a method it does not serve).
  static let unmatchedLabel = "unmatched"
}

/// Turns every error into a JSON response: service errors as they are, Hummingbird's 404 for an
/// unknown route (405 with `Allow` when the path exists for GET), and anything else as a 500
/// whose body says nothing of the cause (the cause goes to the log). Also refuses over-long URIs.
struct JSONErrorMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    do {
      if request.uri.description.utf8.count > HTTPLimits.maximumURILength {
        throw ServiceError(.uriTooLong, "the request URI is longer than \(HTTPLimits.maximumURILength) bytes")
      }
      return try await next(request, context)
    } catch let error as ServiceError {
      return try error.response(from: request, context: context)
    } catch let error as HTTPError where error.status == .notFound {
      if request.method != .get && request.method != .head && RouteTable.isKnownPath(request.uri.path) {
        var refusal = ServiceError(.methodNotAllowed, "only GET and HEAD are allowed here")
        refusal.headers[.allow] = "GET, HEAD"
        return try refusal.response(from: request, context: context)
      }
      return try ServiceError(.notFound, "no such endpoint: see /openapi.yaml").response(
        from: request, context: context)
    } catch let error as HTTPError where (400..<500).contains(error.status.code) {
      return try ServiceError(error.status, error.status.reasonPhrase).response(from: request, context: context)
    } catch {
      context.logger.error("request failed", metadata: ["error": .string(String(describing: error))])
      return try ServiceError(.internalServerError, "internal error").response(from: request, context: context)
    }
  }
}
