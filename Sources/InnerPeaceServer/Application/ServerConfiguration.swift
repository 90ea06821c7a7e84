public import Foundation
public import Logging

/// Everything the service is configured with, in one validated place.
public struct ServerConfiguration: Sendable {
  /// Address to bind; 127.0.0.1 by default, so a server is never exposed by accident.
  public var host: String = "127.0.0.1"
  /// Port to bind; 0 picks a free one (printed at start-up).
  public var port: Int = 8080
  /// Render workers; one per core by default.
  public var concurrency: Int = ProcessInfo.processInfo.activeProcessorCount
  /// Renders that may wait for a worker before new ones get 503.
  public var queueDepth: Int = 2 * ProcessInfo.processInfo.activeProcessorCount
  /// Memory for rendered cards, in MiB (0 turns the cache off).
  public var cacheMegabytes: Int = 32
  /// The time zone whose date decides `/today.png`.
  public var timeZone: TimeZone = TimeZone(identifier: "UTC")!
  /// The local hour (0 to 23) of the daily reminder in `/calendar.ics`.
  public var reminderHour = 10
  /// The clock that decides the date of `/today` (tests set it).
  package var now: @Sendable () -> Date = { Date() }
  /// The origin of absolute URLs (`https://cards.example.com`); `nil` uses each request's `Host`.
  public var publicURL: String?
  /// Whether the nearest proxy's `X-Forwarded-Proto` and `X-Forwarded-Host` (the last values), or
  /// `Forwarded`'s `proto=` and `host=`, decide the origin (when `publicURL` is `nil`): only behind
  /// a proxy that sets them, since a client can send anything.
  public var trustsForwardedHeaders = false
  /// The hosts the service answers for (`name` on any port, or `name:port`); a request for
  /// another gets 400. Empty: any host. With neither these nor `publicURL`, links made from the
  /// request's host are cached privately only.
  public var allowedHosts: [String] = []
  /// The keys that sign and check image URLs (``SigningKeys``: the first signs, all verify); with
  /// them, `/card.{format}` answers only signed URLs.
  public var signingKeys: SigningKeys?
  /// The key that signs (the first of ``signingKeys``); setting one makes it the only key.
  public var urlSigner: URLSigner? {
    get { signingKeys?.signing }
    set { signingKeys = newValue.map { key in try! SigningKeys([key]) } }
  }
  /// Whether every image endpoint, not only custom text, answers only signed URLs (needs
  /// ``urlSigner``).
  public var signsAllImages = false
  /// A folder with quotes.json, pictures.json and the photos; `nil` for the bundled catalog.
  public var catalogDirectory: String?
  /// The lowest level logged.
  public var logLevel: Logger.Level = .info
  /// Text or JSON lines on stderr.
  public var logFormat: LogFormat = .text
  /// Close a connection that has been idle this long, in seconds.
  public var idleTimeoutSeconds: Int = 30
  /// Seconds a 503 asks the client to wait.
  public var retryAfterSeconds: Int = 1
  /// Where renders run. `serve` uses worker processes; the default here, threads of this process,
  /// suits tests that build a service in-process.
  public var renderIsolation: RenderIsolation = .threads
  /// Seconds one render may take in a worker process before the worker is killed (the request
  /// gets 500 and the worker is replaced).
  public var renderTimeoutSeconds: Int = 30
  /// Memory for decoded, scaled photos in MiB, per renderer: each worker process keeps its own.
  /// `serve` passes it to the workers it starts.
  public var backgroundCacheMegabytes: Int = 32
  /// The memory a render worker process may hold at rest (its caches and heap between renders),
  /// in MiB; a worker found holding more after a render is replaced. Its background cache
  /// counts, so this must leave room beyond `backgroundCacheMegabytes`.
  public var workerMemoryMegabytes: Int = 72
  /// Megapixels of cards that may render at once across the workers; a card that would pass it
  /// waits its turn (one card always renders, however large). Bounds the renders' working memory.
  public var renderMegapixels: Int = 20
  /// Seconds from the first byte of a request head to its last; a slower head closes the connection.
  public var headerTimeoutSeconds: Double = 10
  /// Seconds from a request head to the end of its body; a slower body closes the connection.
  public var bodyTimeoutSeconds: Double = 30
  /// Seconds a response may go without the socket taking a single byte of it before the
  /// connection is closed (time without progress, not time since the response was handed over).
  public var writeTimeoutSeconds: Double = 30
  /// Connections served at once; past it a new connection gets an immediate 503 and is closed.
  public var maxConnections: Int = 1024
  /// Seconds SIGTERM waits for responses in flight to reach their sockets before it closes the rest.
  public var drainTimeoutSeconds: Double = 30
  /// Connections one client address may have open; past it a new one gets an immediate 503.
  /// `nil`: 64, or `maxConnections` behind `trustsForwardedHeaders` (every connection then comes
  /// from the proxy). See ``ClientAddress``.
  public var maxConnectionsPerClient: Int?
  /// Renders one client may have running at once. `nil`: half of `concurrency` (at least one).
  public var maxRendersPerClient: Int?
  /// Renders one client may have waiting for a worker. `nil`: half of `queueDepth`.
  public var maxQueuedPerClient: Int?
  /// The origins whose pages may read cards, quotes and feeds (CORS, ``CrossOriginPolicy``):
  /// `scheme://host[:port]` each, or `*` alone for any. Empty: CORS off.
  public var corsOrigins: [String] = []
  /// `HOST:PORT` of a listener of its own for `/metrics` (``MetricsAddress``); the public port
  /// then answers 404 for it. `nil`: `/metrics` on the public port.
  public var metricsAddress: String?

  public init() {}

  /// Checks the values, so a bad flag fails at start-up with one clear line.
  public func validate() throws(ServerConfigurationError) {
    guard (0...65535).contains(port) else { throw .init("--port \(port) is not a port (0 to 65535)") }
    guard (1...256).contains(concurrency) else { throw .init("--concurrency \(concurrency) must be 1 to 256") }
    guard (0...10_000).contains(queueDepth) else { throw .init("--queue \(queueDepth) must be 0 to 10000") }
    guard (0...65_536).contains(cacheMegabytes) else { throw .init("--cache-mb \(cacheMegabytes) must be 0 to 65536") }
    guard (1...3600).contains(idleTimeoutSeconds) else {
      throw .init("--idle-timeout \(idleTimeoutSeconds) must be 1 to 3600 seconds")
    }
    guard !host.isEmpty else { throw .init("--host is empty") }
    guard (1...3600).contains(renderTimeoutSeconds) else {
      throw .init("--render-timeout \(renderTimeoutSeconds) must be 1 to 3600 seconds")
    }
    guard (0...65_536).contains(backgroundCacheMegabytes) else {
      throw .init("--background-cache-mb \(backgroundCacheMegabytes) must be 0 to 65536")
    }
    guard (1...65_536).contains(workerMemoryMegabytes) else {
      throw .init("--worker-memory-mb \(workerMemoryMegabytes) must be 1 to 65536")
    }
    guard renderIsolation.isThreads || workerMemoryMegabytes >= backgroundCacheMegabytes + Self.workerBaseMegabytes
    else {
      throw .init(
        "--worker-memory-mb \(workerMemoryMegabytes) must be at least --background-cache-mb"
          + " (\(backgroundCacheMegabytes)) plus \(Self.workerBaseMegabytes) for the worker itself")
    }
    guard (1...1_000).contains(renderMegapixels) else {
      throw .init("--render-megapixels \(renderMegapixels) must be 1 to 1000")
    }
    for (flag, seconds) in [
      ("--header-timeout", headerTimeoutSeconds), ("--body-timeout", bodyTimeoutSeconds),
      ("--write-timeout", writeTimeoutSeconds), ("--drain-timeout", drainTimeoutSeconds),
    ] where !(seconds > 0 && seconds <= 3600) {
      throw .init("\(flag) \(seconds) must be more than 0 and at most 3600 seconds")
    }
    guard (1...100_000).contains(maxConnections) else {
      throw .init("--max-connections \(maxConnections) must be 1 to 100000")
    }
    if let value = maxConnectionsPerClient, !(1...100_000).contains(value) {
      throw .init("--max-connections-per-client \(value) must be 1 to 100000")
    }
    if let value = maxRendersPerClient, !(1...256).contains(value) {
      throw .init("--max-renders-per-client \(value) must be 1 to 256")
    }
    if let value = maxQueuedPerClient, !(0...10_000).contains(value) {
      throw .init("--max-queued-per-client \(value) must be 0 to 10000")
    }
    _ = try CrossOriginPolicy(origins: corsOrigins)
    if let metricsAddress, MetricsAddress(metricsAddress) == nil {
      throw .init("--metrics-address '\(metricsAddress)' must be HOST:PORT, e.g. 127.0.0.1:9090")
    }
    if let publicURL { try Self.checkPublicURL(publicURL) }
    for host in allowedHosts where !CardLinks.isValidHost(host) {
      throw .init("--allowed-host '\(host)' must be a host name or address, with an optional port")
    }
    guard (0...23).contains(reminderHour) else { throw .init("--reminder-hour \(reminderHour) must be 0 to 23") }
    guard !signsAllImages || urlSigner != nil else {
      throw .init("--sign-all-images needs a key: --signing-key-file or INNERPEACE_SIGNING_KEY")
    }
  }
}

extension ServerConfiguration {
  /// ``maxConnectionsPerClient`` with its default applied.
  var connectionsPerClient: Int { maxConnectionsPerClient ?? (trustsForwardedHeaders ? maxConnections : 64) }
  /// ``maxRendersPerClient`` with its default applied.
  var rendersPerClient: Int { maxRendersPerClient ?? max(1, concurrency / 2) }
  /// ``maxQueuedPerClient`` with its default applied.
  var queuedPerClient: Int { maxQueuedPerClient ?? queueDepth / 2 }

  /// A public URL is an origin: `http` or `https`, a host, an optional port, nothing after.
  static func checkPublicURL(_ url: String) throws(ServerConfigurationError) {
    let problem = "--public-url '\(url)' must be an origin such as https://cards.example.com (no path)"
    let origin = url.hasSuffix("/") ? String(url.dropLast()) : url
    let parts = origin.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0] == "https" || parts[0] == "http", CardLinks.isValidHost(String(parts[1])) else {
      throw .init(problem)
    }
  }

  /// What a render worker holds at rest besides its background cache, with room to grow: its
  /// heap, fonts and glyph caches (about 16 MiB after start-up).
  public static let workerBaseMegabytes = 32
}

/// A configuration value that cannot be used.
public struct ServerConfigurationError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ServerConfiguration {
  /// Descriptors the process needs beyond its connections: the listening socket, logs, photos,
  /// fonts and the render threads' files.
  static let reservedFileDescriptors = 64

  /// Raises the soft limit on open files to what `maxConnections` needs (up to the hard limit),
  /// so that the connection cap, not the descriptor table, is what refuses clients.
  /// - Throws: one line naming the flag when even the hard limit is too low.
  public func reserveFileDescriptors() throws(ServerConfigurationError) {
    let needed = rlim_t(maxConnections + HTTPLimits.refusalAllowance + Self.reservedFileDescriptors)
    var limit = rlimit()
    #if canImport(Glibc)
      let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
      let resource = RLIMIT_NOFILE
    #endif
    guard getrlimit(resource, &limit) == 0 else { return }
    if limit.rlim_cur >= needed { return }
    guard limit.rlim_max >= needed else {
      throw .init(
        "--max-connections \(maxConnections) needs \(needed) open files but the limit is \(limit.rlim_max)"
          + " (raise `ulimit -n` or lower --max-connections)")
    }
    limit.rlim_cur = needed
    _ = setrlimit(resource, &limit)
  }
}
