import Hummingbird
import Logging
import NIOCore

/// `/metrics` on a listener of its own (`--metrics-address`), so that the public port need not
/// expose it: a second Hummingbird application with that one route (HEAD too; any other path a
/// 404 JSON), run as a service of the public application's group. It stops after the public
/// server has drained (the group stops its services in reverse order), so a last scrape during
/// the drain still works.
enum MetricsListener {
  /// The listener for `address`, serving `metrics`; `onRunning` is given its port once it listens.
  static func application(
    address: MetricsAddress, metrics: ServerMetrics, logger: Logger,
    onRunning: @escaping @Sendable (Int) async -> Void
  ) -> some ApplicationProtocol {
    let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: JSONErrorMiddleware(absent: Set(RouteTable.Operation.allCases).subtracting([.metrics])))
    router.get(RouterPath(RouteTable.route(.metrics).path)) { _, _ in response(metrics) }
    return Application(
      router: router,
      configuration: .init(address: .hostname(address.host, port: address.port), serverName: "innerpeace"),
      onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? address.port) },
      logger: logger)
  }

  /// The exposition of `metrics` as a response, never cached.
  static func response(_ metrics: ServerMetrics) -> Response {
    Response(
      status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
      body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
  }
}

/// A `HOST:PORT` to listen on (`[v6]:PORT` for an IPv6 address).
public struct MetricsAddress: Sendable, Equatable {
  public let host: String
  public let port: Int

  /// `text` as a host and a port (0 to 65535); `nil` for anything else.
  public init?(_ text: String) {
    guard let colon = text.lastIndex(of: ":") else { return nil }
    let digits = text[text.index(after: colon)...]
    guard (1...5).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      let port = Int(digits), (0...65535).contains(port)
    else { return nil }
    var host = text[..<colon]
    if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
    guard !host.isEmpty, !host.contains("/"), !host.contains(" ") else { return nil }
    self.host = String(host)
    self.port = port
  }
}
