import ArgumentParser
import Foundation
import Hummingbird
import InnerPeace
import InnerPeaceServer
import Logging
import Synchronization

/// `innerpeace serve`: the HTTP service.
struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve cards over HTTP (see /openapi.yaml once it runs).",
    usage: "innerpeace serve [<options>]",
    discussion: """
      Renders run in --concurrency worker processes behind a queue of --queue; past that the \
      server answers 503 with Retry-After. A render that crashes or exceeds --render-timeout costs \
      its own request a 500; its worker is replaced. Rendered cards are kept in --cache-mb of \
      memory, and each worker keeps --background-cache-mb of scaled photos; a worker holding more \
      than --worker-memory-mb between cards is replaced, and the cards rendering at once total at \
      most --render-megapixels.

      Every phase of a connection has a limit (--header-timeout, --body-timeout, --write-timeout, \
      --idle-timeout, --max-connections). No client address may hold more than \
      --max-connections-per-client connections, --max-renders-per-client workers and \
      --max-queued-per-client places in the queue. SIGTERM or SIGINT stops accepting, answers what was \
      accepted with Connection: close, waits up to --drain-timeout for the responses to reach \
      their clients and exits 0; SIGHUP loads the catalog again, and serves it if it is valid. One \
      log line per request goes to stderr once its last byte is written (text, or JSON with \
      --log-format json).

      Every option can also come from the environment: --some-name from INNERPEACE_SOME_NAME \
      (flags: true or false), and PORT and LOG_LEVEL stand for --port and --log-level. The \
      command line wins over the environment.
      """,
  )

  /// The defaults of every option: the configuration's own, written in one place.
  static let defaults = ServerConfiguration()

  @Option(help: ArgumentHelp("Address to listen on.", valueName: "address"))
  var host = ServeCommand.defaults.host

  @Option(help: ArgumentHelp("Port to listen on (0 picks a free one).", valueName: "port"))
  var port = ServeCommand.defaults.port

  @OptionGroup var catalog: CatalogOptions

  @Option(help: ArgumentHelp("Render worker processes. (default: one per core)", valueName: "n"))
  var concurrency: Int?

  @Option(
    help: ArgumentHelp(
      "Renders that may wait for a worker before new ones get 503. (default: 2 per core)", valueName: "n"))
  var queue: Int?

  @Option(
    name: .customLong("cache-mb"),
    help: ArgumentHelp("Memory for rendered cards, in MiB (0: no cache).", valueName: "MiB"))
  var cacheMegabytes = ServeCommand.defaults.cacheMegabytes

  @Option(
    name: .customLong("background-cache-mb"),
    help: ArgumentHelp(
      "Memory for decoded, scaled photos in each render worker, in MiB (0: no cache).", valueName: "MiB"))
  var backgroundCacheMegabytes = ServeCommand.defaults.backgroundCacheMegabytes

  @Option(
    name: .customLong("worker-memory-mb"),
    help: ArgumentHelp(
      """
      Memory a render worker may hold between renders, its background cache included, in MiB; \
      past it the worker is replaced.
      """, valueName: "MiB"))
  var workerMemoryMegabytes = ServeCommand.defaults.workerMemoryMegabytes

  @Option(
    name: .customLong("render-megapixels"),
    help: ArgumentHelp(
      "Megapixels of cards rendered at once; a card that would pass it waits its turn.", valueName: "n"))
  var renderMegapixels = ServeCommand.defaults.renderMegapixels

  @Option(
    name: .customLong("public-url"),
    help: ArgumentHelp(
      "The origin of the absolute URLs in pages, feeds, /quotes and Content-Location (default: each request's Host).",
      valueName: "origin"))
  var publicURL: String?

  @Option(
    name: .customLong("allowed-host"),
    help: ArgumentHelp(
      "A host the service answers for (repeatable): name (any port) or name:port; another Host gets 400.",
      valueName: "host"))
  var allowedHosts: [String] = []

  @Flag(
    name: .customLong("trust-forwarded-headers"),
    help: """
      Take the origin from the nearest proxy's X-Forwarded-Proto and X-Forwarded-Host (their last \
      values) or Forwarded (only behind a proxy that sets them).
      """)
  var trustForwardedHeaders = false

  @OptionGroup var signingKey: SigningKeyOptions

  @Flag(
    name: .customLong("sign-all-images"),
    help: "Answer only signed URLs on every image endpoint, not only /card (needs a signing key).")
  var signAllImages = false

  @Option(
    name: .customLong("time-zone"),
    help: ArgumentHelp("Time zone whose date picks /today.png, e.g. Europe/Paris. (default: UTC)", valueName: "zone"))
  var timeZone: TimeZone?

  @Option(
    name: .customLong("reminder-hour"),
    help: ArgumentHelp(
      "The local hour (0 to 23, in --time-zone) of the daily reminder in /calendar.ics.", valueName: "hour"))
  var reminderHour = ServeCommand.defaults.reminderHour

  @Option(
    name: .customLong("idle-timeout"),
    help: ArgumentHelp("Seconds before an idle connection is closed.", valueName: "seconds"))
  var idleTimeout = ServeCommand.defaults.idleTimeoutSeconds

  @Option(
    name: .customLong("render-timeout"),
    help: ArgumentHelp("Seconds one render may take before its worker is killed.", valueName: "seconds"))
  var renderTimeout = ServeCommand.defaults.renderTimeoutSeconds

  @Option(
    name: .customLong("log-level"),
    help: ArgumentHelp("The least important level of log line written.", valueName: "level"))
  var logLevel = ServeCommand.defaults.logLevel

  @Option(
    name: .customLong("log-format"),
    help: ArgumentHelp("Log lines as text, or as json (one object per line).", valueName: "format"))
  var logFormat = ServeCommand.defaults.logFormat

  @Flag(
    name: .customLong("in-process"),
    help: "Render on threads of the server process, not in worker processes (a crashing render then stops the server)."
  )
  var inProcess = false
  @Option(
    name: .customLong("header-timeout"),
    help: ArgumentHelp("Seconds a request head may take, first byte to last.", valueName: "seconds"))
  var headerTimeout = ServeCommand.defaults.headerTimeoutSeconds

  @Option(
    name: .customLong("body-timeout"),
    help: ArgumentHelp("Seconds a request body may take after its head.", valueName: "seconds"))
  var bodyTimeout = ServeCommand.defaults.bodyTimeoutSeconds

  @Option(
    name: .customLong("write-timeout"),
    help: ArgumentHelp(
      "Seconds a response may wait without the client taking a byte before the connection closes.", valueName: "seconds"
    ))
  var writeTimeout = ServeCommand.defaults.writeTimeoutSeconds

  @Option(
    name: .customLong("max-connections"),
    help: ArgumentHelp("Connections served at once; past it a new one gets an immediate 503.", valueName: "n"))
  var maxConnections = ServeCommand.defaults.maxConnections

  @Option(
    name: .customLong("max-connections-per-client"),
    help: ArgumentHelp(
      """
      Connections one client address may have open; past it a new one gets an immediate 503. \
      (default: 64; --max-connections with --trust-forwarded-headers)
      """, valueName: "n"))
  var maxConnectionsPerClient: Int?

  @Option(
    name: .customLong("max-renders-per-client"),
    help: ArgumentHelp(
      "Renders one client may have running at once. (default: half of --concurrency, at least 1)", valueName: "n"))
  var maxRendersPerClient: Int?

  @Option(
    name: .customLong("max-queued-per-client"),
    help: ArgumentHelp(
      "Renders one client may have waiting; past both, its next card gets 503. (default: half of --queue)",
      valueName: "n"))
  var maxQueuedPerClient: Int?

  @Option(
    name: .customLong("cors-origin"),
    help: ArgumentHelp(
      """
      An origin whose pages may read cards, quotes and feeds (CORS), scheme://host[:port]; \
      repeatable, or * for any. (default: none)
      """, valueName: "origin"))
  var corsOrigins: [String] = []

  @Option(
    name: .customLong("metrics-address"),
    help: ArgumentHelp(
      "Serve /metrics on this address of its own (HOST:PORT; 0 picks a free port) and not on the public port.",
      valueName: "host:port"))
  var metricsAddress: String?

  @Option(
    name: .customLong("drain-timeout"),
    help: ArgumentHelp("Seconds SIGTERM waits for responses in flight to reach their clients.", valueName: "seconds"))
  var drainTimeout = ServeCommand.defaults.drainTimeoutSeconds

  func run() async throws {
    let configuration = try makeConfiguration()
    let host = configuration.host
    let listening = Listening()
    // The start-up and shutdown lines are written at any level, in the log's format.
    let lifecycle = {
      var logger = makeLogger(configuration)
      logger.logLevel = min(logger.logLevel, .notice)
      return logger
    }()
    let app: any ApplicationProtocol
    do {
      app = try await buildApplication(configuration: configuration) { port in
        listening.flag.store(true, ordering: .relaxed)
        // Through the log's writer: an unwritable stderr drops (and counts) the line, and the
        // server still starts.
        lifecycle.notice(
          "listening on http://\(host):\(port)",
          metadata: [
            "address": .string("http://\(host):\(port)"), "port": .stringConvertible(port),
            "pid": .stringConvertible(Int(ProcessInfo.processInfo.processIdentifier)),
          ])
      } onMetricsRunning: { port in
        let metricsHost = MetricsAddress(configuration.metricsAddress ?? "")?.host ?? host
        lifecycle.notice(
          "metrics on http://\(metricsHost):\(port)/metrics",
          metadata: ["address": .string("http://\(metricsHost):\(port)/metrics"), "port": .stringConvertible(port)])
      }
    } catch let error as ServerConfigurationError {
      throw CommandLineError(description: error.description, exitCode: ExitStatus.software)
    } catch let error as InnerPeaceError where catalog.catalog != nil && error.isCatalogProblem {
      // Named by its option, so that one set from INNERPEACE_CATALOG is traced to the variable.
      throw CommandLineError(description: "--catalog: \(error.description)", exitCode: ExitStatus.code(for: error))
    }
    do {
      try await app.runService()
    } catch  where !listening.flag.load(ordering: .relaxed) {
      throw CommandLineError(
        description:
          "cannot listen on --host \(host) --port \(configuration.port): \(InnerPeaceCommand.wording(forSystemError: error))",
        exitCode: ExitStatus.software)
    }
    lifecycle.notice("stopped")
  }

  /// Whether the server got as far as listening (a failure before that is the address's).
  private final class Listening: Sendable {
    let flag = Atomic(false)
  }

  /// The flags (and, through ``ServeEnvironment``, the environment) as one configuration.
  func makeConfiguration() throws -> ServerConfiguration {
    var configuration = ServerConfiguration()
    configuration.host = host
    configuration.port = port
    configuration.catalogDirectory = catalog.catalog
    if let concurrency { configuration.concurrency = concurrency }
    if let queue { configuration.queueDepth = queue }
    configuration.cacheMegabytes = cacheMegabytes
    configuration.backgroundCacheMegabytes = backgroundCacheMegabytes
    configuration.workerMemoryMegabytes = workerMemoryMegabytes
    configuration.renderMegapixels = renderMegapixels
    configuration.idleTimeoutSeconds = idleTimeout
    configuration.renderTimeoutSeconds = renderTimeout
    configuration.headerTimeoutSeconds = headerTimeout
    configuration.bodyTimeoutSeconds = bodyTimeout
    configuration.writeTimeoutSeconds = writeTimeout
    configuration.maxConnections = maxConnections
    configuration.maxConnectionsPerClient = maxConnectionsPerClient
    configuration.maxRendersPerClient = maxRendersPerClient
    configuration.maxQueuedPerClient = maxQueuedPerClient
    configuration.drainTimeoutSeconds = drainTimeout
    configuration.metricsAddress = metricsAddress
    configuration.corsOrigins = corsOrigins
    configuration.publicURL = publicURL
    configuration.reminderHour = reminderHour
    configuration.trustsForwardedHeaders = trustForwardedHeaders
    configuration.allowedHosts = allowedHosts
    configuration.signingKeys = try signingKey.keys()
    configuration.signsAllImages = signAllImages
    if let timeZone { configuration.timeZone = timeZone }
    configuration.logLevel = logLevel
    configuration.logFormat = logFormat
    // After the log's settings, which the workers take.
    if !inProcess { configuration.renderIsolation = .processes(workerLaunch(configuration)) }
    do {
      try configuration.validate()
      try configuration.reserveFileDescriptors()
    } catch {
      throw CommandLineError.usage(error.description)
    }
    return configuration
  }

  /// This very binary as a worker (``RenderWorkerCommand/launch(catalog:backgroundCacheMegabytes:logFormat:logLevel:)``),
  /// writing its lines in the server's format, and its stderr relayed into the server's log.
  private func workerLaunch(_ configuration: ServerConfiguration) -> WorkerLaunch {
    var launch = RenderWorkerCommand.launch(
      catalog: catalog.catalog, backgroundCacheMegabytes: configuration.backgroundCacheMegabytes,
      logFormat: configuration.logFormat, logLevel: configuration.logLevel)
    launch.relayedLogFormat = configuration.logFormat
    return launch
  }
}

extension InnerPeaceError {
  /// Whether the error is about the catalog's files (as opposed to the fonts or a render).
  var isCatalogProblem: Bool {
    switch self {
    case .catalogUnreadable, .catalogMalformed, .catalogInvalid, .pictureMissing, .pictureUndecodable: true
    default: false
    }
  }
}
