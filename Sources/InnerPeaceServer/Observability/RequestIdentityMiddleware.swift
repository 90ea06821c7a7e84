import HTTPTypes
import Hummingbird
import Instrumentation

/// Gives each request its identity (``RequestIdentity``): extracts `X-Request-Id` and
/// `traceparent` into the request's `ServiceContext` through ``RequestIdentityInstrument`` (making
/// a request ID when the client sent no sane one), runs the rest of the router with that context
/// current (so every line logged for the request, and the render sent to a worker, carries it),
/// and echoes the ID in the response's `X-Request-Id`.
///
/// On a live connection ``ConnectionGuard`` has already put the ID it logs in the request's
/// `X-Request-Id`, so both name the request alike; it also sets the header on the responses the
/// router never makes.
struct RequestIdentityMiddleware: RouterMiddleware {
  typealias Context = BasicRequestContext
  let instrument = RequestIdentityInstrument()

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    var serviceContext = ServiceContext.current ?? .topLevel
    instrument.extract(request.headers, into: &serviceContext, using: HTTPFieldsExtractor())
    let requestID = serviceContext.requestID ?? RequestIdentity.makeRequestID()
    serviceContext.requestID = requestID
    var response = try await ServiceContext.withValue(serviceContext) { try await next(request, context) }
    response.headers[Self.requestIDField] = requestID
    return response
  }

  static let requestIDField = HTTPField.Name(RequestIdentity.requestIDHeader)!
}

/// Reads a request's header fields for an `Instrument`.
struct HTTPFieldsExtractor: Extractor {
  func extract(key: String, from fields: HTTPFields) -> String? {
    HTTPField.Name(key).flatMap { fields[$0] }
  }
}
