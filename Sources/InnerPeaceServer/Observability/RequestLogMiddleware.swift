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
        "status": .stringConvertible(response.status.code),
        "ms": .stringConvertible((milliseconds * 10).rounded() / 10),
        "bytes": response.headers[.contentLength].flatMap(Int.init).map { .stringConvertible($0) } ?? "-",
      ])
    return response
  }

  /// The label of a request the router matched no route for (or a method it does not serve).
  static let unmatchedLabel = "unmatched"
}
