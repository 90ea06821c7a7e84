import Hummingbird

/// Pins the catalog generation current when a request starts for the whole request
/// (``CardService/withCurrentGeneration(_:)``): a reload during the request does not change the
/// catalog, links, version or caches it sees.
struct CatalogPinMiddleware<Renderer: CardRendering, Context: RequestContext>: RouterMiddleware {
  let service: CardService<Renderer>

  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    try await service.withCurrentGeneration { try await next(request, context) }
  }
}
