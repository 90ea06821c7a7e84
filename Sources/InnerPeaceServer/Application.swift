public import Hummingbird
import HummingbirdCore
public import InnerPeace
public import Logging
import NIOCore

/// Builds the router: the middlewares and every route, for a given card service.
public func buildRouter<Renderer: CardRendering>(service: CardService<Renderer>) -> Router<BasicRequestContext> {
  // HEAD answers like GET without the body (RFC 9110 §9.1), for every route.
  let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
  router.add(middleware: RequestLogMiddleware(metrics: service.metrics))
  router.add(middleware: JSONErrorMiddleware(knownPath: { Routes.matches($0) }))
  ServiceRoutes(service: service).add(to: router)
  return router
}

/// The whole application: the router on an HTTP/1.1 server with a limit for every phase of a
/// connection (``GuardedHTTP1Channel``) and on open connections, on the configured address. Run it
/// with `runService()`: on SIGTERM or SIGINT it stops accepting, answers the requests it has with
/// `Connection: close`, waits (up to the drain timeout) until every response is in its socket, and
/// returns.
public func buildApplication<Renderer: CardRendering>(
  service: CardService<Renderer>, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
  let configuration = service.configuration
  let connections = ConnectionCounter()
  return Application(
    router: buildRouter(service: service),
    server: HTTPServerBuilder { responder in
      GuardedHTTP1Channel(responder: responder, configuration: configuration, connections: connections)
    },
    configuration: .init(
      address: .hostname(configuration.host, port: configuration.port), serverName: "innerpeace",
      availableConnectionsDelegate: ConnectionCap(
        counter: connections, hardLimit: configuration.maxConnections + HTTPLimits.refusalAllowance)),
    onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
    logger: logger
  )
}
