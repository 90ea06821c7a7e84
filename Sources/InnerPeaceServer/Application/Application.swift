import Foundation
public import Hummingbird
import HummingbirdCore
import InnerPeace
public import Logging
import NIOCore
import UnixSignals

/// Builds the whole service from one configuration, as Hummingbird's examples do: checks the
/// configuration, loads the catalog (a corrupt one fails here, at start-up, not in a request),
/// makes the renderer, the logger (``LogFormat``, level), the metrics and the render pool (its
/// worker processes are started and awaited, without blocking a thread), and the routes, and
/// traps SIGHUP (``CatalogReloader``: it reloads the catalog). Run the result with
/// `runService()`; the render pool (a service of the group) stops its workers after the server
/// has drained.
///
/// The server listens only once the workers are ready, so that a catalog or binary with which no
/// worker can start stops `serve` with its cause instead of serving 503s; `/readyz` answers
/// "starting" only to requests before that (none from outside).
/// - Throws: ``ServerConfigurationError`` for a bad configuration or a worker that cannot start,
///   and `InnerPeaceError` for a catalog or fonts that cannot load.
/// `onMetricsRunning` is given the metrics listener's port once it listens (with a metrics address).
public func buildApplication(
  configuration: ServerConfiguration, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
  onMetricsRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
  try configuration.validate()
  // The web page's files, read once: a broken install fails here, not in a request.
  do { _ = try PageAssets.bundled() } catch { throw ServerConfigurationError(error.description) }
  let renderer = try CatalogReloader.loadRenderer(configuration)
  let logger = makeLogger(configuration)
  if configuration.publicURL == nil && configuration.allowedHosts.isEmpty {
    logger.warning(
      """
      neither --public-url nor --allowed-host is set: links are made from each request's Host, and \
      the pages, feeds, /quotes and cards that carry them are sent Cache-Control: private
      """)
  }
  let service = CardService(renderer: renderer, configuration: configuration, logger: logger)
  try await service.startRenderers()
  // Trapped now, before the server listens: from then on SIGHUP reloads and never kills.
  let reloader = CatalogReloader(service: service, signals: await UnixSignalsSequence(trapping: .sighup))
  return makeApplication(
    service: service, logger: logger, reloader: reloader, onServerRunning: onServerRunning,
    onMetricsRunning: onMetricsRunning)
}

/// The service's logger, in the configured format and level (no process-wide logging state). Its
/// lines go to stderr through ``LogOutput``: a line that cannot be written is dropped and counted.
/// Every line logged in a request's task carries its `request_id` and `trace_id`
/// (``RequestIdentity``).
package func makeLogger(_ configuration: ServerConfiguration) -> Logger {
  makeLogger(format: configuration.logFormat, level: configuration.logLevel)
}

/// A logger of the service's kind with this format, level and label (the render workers' too).
public func makeLogger(format: LogFormat, level: Logger.Level, label: String = "innerpeace") -> Logger {
  switch format {
  case .json:
    return Logger(label: label) { label in
      JSONLogHandler(label: label, level: level, metadataProvider: .requestIdentity)
    }
  case .text:
    return Logger(label: label) { label in
      LogOutput.textHandler(label: label, level: level, metadataProvider: .requestIdentity)
    }
  }
}

/// Builds the router: the middlewares and every route, for a given card service.
package func buildRouter<Renderer: CardRendering>(service: CardService<Renderer>) -> Router<BasicRequestContext> {
  // HEAD answers like GET without the body (RFC 9110 §9.1), for every route.
  let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
  router.add(middleware: RequestIdentityMiddleware())
  router.add(middleware: CatalogPinMiddleware(service: service))
  router.add(middleware: RequestLogMiddleware(metrics: service.metrics))
  // Before the errors become JSON, so that a page of an allowed origin can read them too.
  if let policy = try? CrossOriginPolicy(origins: service.configuration.corsOrigins) {
    router.add(middleware: CrossOriginMiddleware(policy: policy))
  }
  router.add(
    middleware: JSONErrorMiddleware(absent: service.configuration.metricsAddress == nil ? [] : [.metrics]))
  router.add(middleware: HostMiddleware(links: service.links))
  router.add(middleware: CompressionMiddleware(bodies: GzipBodies()))
  CardController(service: service).addRoutes(to: router)
  InfoController(service: service).addRoutes(to: router)
  FeedController(service: service).addRoutes(to: router)
  PageController(service: service).addRoutes(to: router)
  return router
}

/// The whole application: the router on an HTTP/1.1 server with a limit for every phase of a
/// connection (``GuardedHTTP1Channel``) and on open connections, on the configured address. Run it
/// with `runService()`: on SIGTERM or SIGINT it stops accepting, answers the requests it has with
/// `Connection: close`, waits (up to the drain timeout) until every response is in its socket, and
/// returns.
package func buildApplication<Renderer: CardRendering>(
  service: CardService<Renderer>, logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
  onMetricsRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
  makeApplication(
    service: service, logger: logger, reloader: nil, onServerRunning: onServerRunning,
    onMetricsRunning: onMetricsRunning)
}

/// ``buildApplication(service:logger:onServerRunning:)``, with the catalog's reloader (SIGHUP) as
/// a service of the group when there is one.
func makeApplication<Renderer: CardRendering>(
  service: CardService<Renderer>, logger: Logger, reloader: CatalogReloader?,
  onServerRunning: @escaping @Sendable (Int) async -> Void, onMetricsRunning: @escaping @Sendable (Int) async -> Void
) -> some ApplicationProtocol {
  let configuration = service.configuration
  let connections = ConnectionCounter()
  var app = Application(
    router: buildRouter(service: service),
    server: HTTPServerBuilder { responder in
      GuardedHTTP1Channel(responder: responder, configuration: configuration, connections: connections)
    },
    configuration: .init(
      address: .hostname(configuration.host, port: configuration.port), serverName: "innerpeace",
      availableConnectionsDelegate: ConnectionCap(
        counter: connections, hardLimit: configuration.maxConnections + HTTPLimits.refusalAllowance, logger: logger)),
    onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
    logger: logger
  )
  // After the server in the group's order of shutdown: it stops once the server has drained.
  app.addServices(service.pool)
  if let reloader { app.addServices(reloader) }
  // After the pool, so stopped before it: and after the server has drained.
  if let address = configuration.metricsAddress.flatMap(MetricsAddress.init) {
    app.addServices(
      MetricsListener.application(
        address: address, metrics: service.metrics, logger: logger, onRunning: onMetricsRunning))
  }
  return app
}
