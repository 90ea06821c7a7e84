import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Refuses, with a 400 and the JSON body, a request whose host was marked bad on its connection
/// (``RequestTarget``) or is not one of the allowed hosts.
struct HostMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext
  let links: CardLinks

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    if let problem = request.headers[Self.problemField] { throw ServiceError(.badRequest, problem) }
    guard links.admits(host: links.requestedOrigin(of: request).host) else {
      throw ServiceError(.badRequest, "this service does not answer for that host")
    }
    return try await next(request, context)
  }

  static let problemField = HTTPField.Name(RequestTarget.problemField)!
}
