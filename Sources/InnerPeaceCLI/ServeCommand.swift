import ArgumentParser
import Foundation
import InnerPeace
import InnerPeaceServer
import Logging

/// `innerpeace serve`: the HTTP service.
struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Serve cards over HTTP (see /openapi.yaml once it runs).",
    discussion: """
      Renders run on --concurrency threads behind a queue of --queue; past that the server answers
      503 with Retry-After. Rendered cards are kept in --cache-mb of memory. Every phase of a
      connection has a limit (--header-timeout, --body-timeout, --write-timeout, --idle-timeout,
      --max-connections). SIGTERM or SIGINT stops accepting, answers what was accepted with
      Connection: close, waits up to --drain-timeout for the responses to reach their clients and
      exits 0. One log line per request goes to stderr once its last byte is written
      (LOG_LEVEL=debug|info|warning|error).
      """
  )

  @Option(help: "Address to listen on.")
  var host = "127.0.0.1"

  @Option(help: "Port to listen on (0 picks a free one).")
  var port = 8080

  @Option(help: ArgumentHelp("A folder with your own quotes.json, pictures.json and photos.", valueName: "dir"))
  var catalog: String?

  @Option(help: "Render threads. (default: one per core)")
  var concurrency = ProcessInfo.processInfo.activeProcessorCount

  @Option(help: "Renders that may wait for a thread before new ones get 503. (default: 2 per core)")
  var queue = 2 * ProcessInfo.processInfo.activeProcessorCount

  @Option(name: .customLong("cache-mb"), help: "Memory for rendered cards, in MiB (0: no cache).")
  var cacheMegabytes = 64

  @Option(name: .customLong("time-zone"), help: "Time zone whose date picks /today.png (e.g. Europe/Paris).")
  var timeZone = "UTC"

  @Option(name: .customLong("idle-timeout"), help: "Seconds before an idle connection is closed.")
  var idleTimeout = 30

  @Option(name: .customLong("header-timeout"), help: "Seconds a request head may take, first byte to last.")
  var headerTimeout = 10.0

  @Option(name: .customLong("body-timeout"), help: "Seconds a request body may take after its head.")
  var bodyTimeout = 30.0

  @Option(
    name: .customLong("write-timeout"),
    help: "Seconds a response may wait without the client taking a byte before the connection closes.")
  var writeTimeout = 30.0

  @Option(
    name: .customLong("max-connections"),
    help: "Connections served at once; past it a new one gets an immediate 503.")
  var maxConnections = 1024

  @Option(
    name: .customLong("drain-timeout"),
    help: "Seconds SIGTERM waits for responses in flight to reach their clients.")
  var drainTimeout = 30.0

  func run() async throws {
    var configuration = ServerConfiguration()
    configuration.host = host
    configuration.port = port
    configuration.concurrency = concurrency
    configuration.queueDepth = queue
    configuration.cacheMegabytes = cacheMegabytes
    configuration.idleTimeoutSeconds = idleTimeout
    configuration.headerTimeoutSeconds = headerTimeout
    configuration.bodyTimeoutSeconds = bodyTimeout
    configuration.writeTimeoutSeconds = writeTimeout
    configuration.maxConnections = maxConnections
    configuration.drainTimeoutSeconds = drainTimeout
    guard let zone = TimeZone(identifier: timeZone) else {
      throw CommandLineError.usage("unknown --time-zone '\(timeZone)': use an IANA name such as Europe/Paris")
    }
    configuration.timeZone = zone
    do {
      try configuration.validate()
      try configuration.reserveFileDescriptors()
    } catch {
      throw CommandLineError.usage(error.description)
    }
    // A corrupt catalog fails here, at start-up, not in the middle of a request.
    let catalog = try RenderCommand.loadCatalog(catalog)
    let renderer = try CardRenderer(catalog: catalog)

    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel =
        ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
      return handler
    }
    let logger = Logger(label: "innerpeace")
    let service = CardService(renderer: renderer, configuration: configuration, logger: logger)
    let host = configuration.host
    let app = buildApplication(service: service, logger: logger) { port in
      warn("innerpeace: listening on http://\(host):\(port)")
    }
    try await app.runService()
    try await service.shutdown()
    warn("innerpeace: stopped")
  }
}
