public import Foundation

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
  public var cacheMegabytes: Int = 64
  /// The time zone whose date decides `/today.png`.
  public var timeZone: TimeZone = TimeZone(identifier: "UTC")!
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
  public var backgroundCacheMegabytes: Int = 64

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
  }
}

/// A configuration value that cannot be used.
public struct ServerConfigurationError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}

/// Request limits of the HTTP API (the card limits are ``InnerPeace/Limits``).
public enum HTTPLimits {
  /// Longest request target (path and query), in bytes; longer gets 414.
  public static let maximumURILength = 32_768
}

/// Where renders run.
public enum RenderIsolation: Sendable {
  /// On the render pool's threads, in the server process: a render that traps stops the server.
  case threads
  /// In worker processes started with this launch, one per render thread: a render that traps
  /// costs its own request a 500, and the worker is replaced.
  case processes(WorkerLaunch)
}
