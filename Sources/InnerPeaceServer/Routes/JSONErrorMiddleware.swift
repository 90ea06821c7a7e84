import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into a JSON response: service errors as they are, Hummingbird's 404 for an
/// unknown route (405 with `Allow` when the path exists for GET; 400 naming the format for an
/// image path with an unknown extension, `/cards/3.gif`), and anything else as a 500
/// whose body says nothing of the cause (the cause goes to the log). Also refuses over-long URIs.
struct JSONErrorMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext

  /// Operations of ``RouteTable`` this router does not serve (`/metrics` when it has a listener
  /// of its own): their paths are a 404 for every method.
  var absent: Set<RouteTable.Operation> = []

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    do {
      if request.uri.description.utf8.count > HTTPLimits.maximumURILength {
        throw ServiceError(.uriTooLong, "the request URI is longer than \(HTTPLimits.maximumURILength) bytes")
      }
      return try await next(request, context)
    } catch let error as ServiceError {
      if error.status == .notFound, let refusal = Self.unknownFormat(request) {
        return try refusal.response(from: request, context: context)
      }
      return try error.response(from: request, context: context)
    } catch let error as HTTPError where error.status == .notFound {
      if let refusal = Self.unknownFormat(request) { return try refusal.response(from: request, context: context) }
      if request.method != .get && request.method != .head
        && RouteTable.isKnownPath(request.uri.path, excluding: absent)
      {
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

  /// The 400 for a GET or HEAD of an image path whose extension names no format
  /// (``RouteTable/unknownFormat(inPath:)``), as for `format=`: it names the format and the known
  /// ones. `nil` for any other request, which stays a 404 (or 405).
  static func unknownFormat(_ request: Request) -> ServiceError? {
    guard request.method == .get || request.method == .head,
      let format = RouteTable.unknownFormat(inPath: request.uri.path)
    else { return nil }
    return .badParameter("format", "unknown format '\(format)': use \(RouteTable.formatList)")
  }
}
