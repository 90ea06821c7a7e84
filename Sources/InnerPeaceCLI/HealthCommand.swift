import ArgumentParser
import Foundation
import InnerPeaceServer
import NIOCore
import NIOHTTP1
import NIOPosix

/// `innerpeace health`: one GET of `/healthz` (or `/readyz`) on the local service, for Docker's
/// `HEALTHCHECK` and Kubernetes exec probes, in images that have no curl.
///
/// Exit 0 on a 200 (its body on stdout); else exit 1 with one line on stderr: the status and body
/// (`innerpeace: not ready: 503 {...}`) or why nothing answered
/// (`innerpeace: cannot connect to 127.0.0.1:8080: connection refused`).
struct HealthCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "health",
    abstract: "Check the local service: exit 0 if /healthz (or /readyz) answers 200, else 1.",
    discussion: """
      The port is --port, else the one serve would take from the environment (INNERPEACE_PORT, \
      else PORT), else serve's default. One GET, answered within 2 seconds or failed.
      """
  )

  @Flag(help: "Ask /readyz (ready for traffic) rather than /healthz (alive).")
  var ready = false

  @Option(help: ArgumentHelp("Address of the service.", valueName: "address"))
  var host = "127.0.0.1"

  @Option(help: ArgumentHelp("Port of the service. (default: as serve picks it)", valueName: "port"))
  var port: Int?

  /// The whole check (connect, request, answer) must end within this.
  static let timeout = TimeAmount.seconds(2)

  /// The most of an answer's body read (a health answer is a few dozen bytes).
  static let maximumBodyBytes = 64 << 10

  func run() async throws {
    let port = try port ?? Self.port(environment: ProcessInfo.processInfo.environment)
    let path = ready ? "/readyz" : "/healthz"
    let outcome: Outcome
    do {
      outcome = try await Self.get(path, host: host, port: port)
    } catch {
      try Self.fail(Self.problem(error, host: host, port: port))
    }
    guard outcome.status == .ok else {
      try Self.fail("\(ready ? "not ready" : "not healthy"): \(outcome.status.code) \(outcome.oneLineBody)")
    }
    try StandardStreams.writeOutput(Array((outcome.oneLineBody + "\n").utf8))
  }

  /// The port serve listens on with this environment: `INNERPEACE_PORT`, else `PORT` (serve's
  /// order, ``ServeEnvironment``), else ``ServerConfiguration``'s default.
  /// - Throws: ``CommandLineError`` for a variable that is not a port.
  static func port(environment: [String: String]) throws -> Int {
    let variables = [ServeEnvironment.variable(for: "port")] + [ServeEnvironment.aliases["port"]].compactMap { $0 }
    guard let variable = variables.first(where: { environment[$0] != nil }), let text = environment[variable] else {
      return ServerConfiguration().port
    }
    guard let port = Int(text), (1...65535).contains(port) else {
      throw CommandLineError.usage("\(variable)=\(text) is not a port (1 to 65535)")
    }
    return port
  }

  /// What the service answered.
  struct Outcome {
    let status: HTTPResponseStatus
    let body: ByteBuffer?

    /// The body as one line of at most 200 characters.
    var oneLineBody: String {
      let text = body.map { String(buffer: $0) } ?? ""
      let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
      return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
  }

  /// No complete answer came within ``timeout``.
  struct TimedOut: Error {}

  /// The connection closed before a complete answer.
  struct ClosedEarly: Error {}

  /// One `GET path` over a new connection, aggregated by NIO's client response aggregator.
  static func get(_ path: String, host: String, port: Int) async throws -> Outcome {
    let group = MultiThreadedEventLoopGroup.singleton
    let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
    let answer = group.next().makePromise(of: NIOHTTPClientResponseFull.self)
    let deadline = answer.futureResult.eventLoop.scheduleTask(in: timeout) { answer.fail(TimedOut()) }
    defer { deadline.cancel() }
    let connecting = ClientBootstrap(group: answer.futureResult.eventLoop)
      .connectTimeout(timeout)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHTTPClientHandlers()
          try channel.pipeline.syncOperations.addHandlers(
            NIOHTTPClientResponseAggregator(maxContentLength: maximumBodyBytes), AnswerHandler(answer: answer))
        }
      }
      .connect(to: address)
    connecting.whenFailure { answer.fail($0) }
    connecting.whenSuccess { channel in
      var headers = HTTPHeaders()
      headers.add(name: "Host", value: "\(host):\(port)")
      headers.add(name: "User-Agent", value: "innerpeace-health")
      headers.add(name: "Connection", value: "close")
      let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
      channel.write(HTTPClientRequestPart.head(head), promise: nil)
      channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
      answer.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }
    let full = try await answer.futureResult.get()
    return Outcome(status: full.head.status, body: full.body)
  }

  /// Completes the promise with the aggregated answer, or fails it with the pipeline's error or
  /// an early close.
  final class AnswerHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOHTTPClientResponseFull
    let answer: EventLoopPromise<NIOHTTPClientResponseFull>

    init(answer: EventLoopPromise<NIOHTTPClientResponseFull>) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      answer.succeed(unwrapInboundIn(data))
    }
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
      answer.fail(error)
      context.close(promise: nil)
    }
    func channelInactive(context: ChannelHandlerContext) {
      answer.fail(ClosedEarly())
    }
  }

  /// Why no answer came, in a few plain words (`cannot connect to 127.0.0.1:8080: connection refused`).
  static func problem(_ error: any Error, host: String, port: Int) -> String {
    let seconds = timeout.nanoseconds / 1_000_000_000
    return switch error {
    case let error as IOError:
      "cannot connect to \(host):\(port): \(String(cString: strerror(error.errnoCode)).lowercased())"
    case ChannelError.connectTimeout: "cannot connect to \(host):\(port): no connection within \(seconds) s"
    case is SocketAddressError: "cannot connect to \(host):\(port): not an address"
    case is TimedOut: "no answer from \(host):\(port) within \(seconds) s"
    case is ClosedEarly: "no answer from \(host):\(port): the connection closed"
    default: "no answer from \(host):\(port): \(error)"
    }
  }

  /// Writes `message` as the one line on stderr and exits 1.
  private static func fail(_ message: String) throws -> Never {
    StandardStreams.writeError("innerpeace: \(message)\n")
    throw ExitCode.failure
  }
}
