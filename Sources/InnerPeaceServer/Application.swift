public import Hummingbird
public import InnerPeace
public import Logging
import NIOCore

/// Builds the router: the middlewares and every route, for a given card service.
public func buildRouter<Renderer: CardRendering>(service: CardService<Renderer>) -> Router<BasicRequestContext> {
  // HEAD answers like GET without the body (RFC 9110 §9.1), for every route.
  let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
  router.add(middleware: RequestLogMiddleware(metrics: service.metrics))
  router.add(middleware: JSONErrorMiddleware(knownPath: knownGETPath))
  CardRoutes(service: service).add(to: router)
  InfoRoutes(service: service).add(to: router)
  return router
}

/// Whether a path is one the API serves with GET (for 405 against 404).
@Sendable func knownGETPath(_ path: String) -> Bool {
  let fixed: Set<String> = ["/", "/quotes", "/healthz", "/metrics", "/openapi.yaml"]
  if fixed.contains(path) { return true }
  for stem in ["/random", "/card", "/today"] where ["png", "jpg", "webp"].contains(where: { path == "\(stem).\($0)" }) {
    return true
  }
  // Exactly one segment after the prefix, as the routes take.
  for prefix in ["/cards/", "/quotes/"] where path.hasPrefix(prefix) {
    let rest = path.dropFirst(prefix.count)
    return !rest.isEmpty && !rest.contains("/")
  }
  return false
}

/// The whole application: the router on an HTTP/1.1 server with an idle timeout, on the
/// configured address. Run it with `runService()`, which drains in-flight requests on SIGTERM or
/// SIGINT.
public func buildApplication<Renderer: CardRendering>(
  service: CardService<Renderer>, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
  let configuration = service.configuration
  return Application(
    router: buildRouter(service: service),
    server: .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)))),
    configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "innerpeace"),
    onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
    logger: logger
  )
}
