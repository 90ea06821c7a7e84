import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every phase of a connection has a limit, and a shutdown finishes what it accepted, end to end:
/// a small live suite on a loopback server, driven with plain sockets. The limits themselves are
/// timed to the millisecond on an embedded channel (``ConnectionGuardTests``); here every wait is
/// for an event (bytes, a close), with generous bounds only as hang guards.
@Suite(.serialized, .tags(.live, .process, .binary)) struct ConnectionLimitTests {
  /// Each new limit is validated with one line naming its flag; the defaults are valid.
  @Test func limitsAreValidated() throws {
    try ServerConfiguration().validate()
    let cases: [(String, (inout ServerConfiguration) -> Void)] = [
      ("--header-timeout", { $0.headerTimeoutSeconds = 0 }), ("--body-timeout", { $0.bodyTimeoutSeconds = -1 }),
      ("--write-timeout", { $0.writeTimeoutSeconds = 4000 }), ("--drain-timeout", { $0.drainTimeoutSeconds = .nan }),
      ("--max-connections", { $0.maxConnections = 0 }),
    ]
    for (flag, change) in cases {
      var configuration = ServerConfiguration()
      change(&configuration)
      #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
      do {
        try configuration.validate()
      } catch {
        #expect(error.description.hasPrefix(flag), "\(error)")
        #expect(!error.description.contains("\n"))
      }
    }
  }

  // MARK: Request side (each limit to the millisecond: ConnectionGuardTests)

  /// A head sent a header line at a time (slowloris) is cut by the server: the socket closes
  /// while the client is still sending, and no request is logged as cut.
  @Test(.timeLimit(.minutes(5)))
  func slowHeadIsCut() async throws {
    var configuration = testConfiguration()
    configuration.headerTimeoutSeconds = 1
    let logs = LogStore()
    try await withLiveServer(configuration: configuration, logs: logs) { port, _ in
      let closed = try await closesWhileDripping(port, head: "GET /healthz HTTP/1.1\r\n") { "X-Slow-\($0): 1\r\n" }
      #expect(closed, "the server never closed a head that did not end")
      #expect(await logs.waitForLine { $0.contains("request head too slow") } != nil, "\(logs.lines)")
      #expect(!logs.lines.contains { $0.contains("complete=false") }, "\(logs.lines)")
    }
  }

  /// HTTP/1.0 without keep-alive: the connection closes after the response (the idle timeout,
  /// 30 s here, is past the read's hang guard).
  @Test(.timeLimit(.minutes(5)))
  func http10IsClosedAfterItsResponse() async throws {
    try await withLiveServer(configuration: testConfiguration()) { port, _ in
      let bytes = try await onOwnThread {
        let socket = try TestSocket(port: port)
        try socket.send("GET /healthz HTTP/1.0\r\n\r\n")
        return try socket.readToEnd(timeout: 20)
      }
      let reply = try replyOf(bytes)
      #expect(reply.status == 200)
      #expect(reply.header("Connection")?.lowercased() == "close")
      #expect(reply.header("Content-Length") == String(reply.body.count))
    }
  }

  /// A URI over the limit gets the JSON 414 at every length: through the router up to NIO's
  /// head limit, from the connection past it; an oversized header block gets a JSON 431.
  @Test(.timeLimit(.minutes(5)))
  func overlongURIsGetJSON414AtEveryLength() async throws {
    try await withLiveServer(configuration: testConfiguration()) { port, _ in
      for length in [33 * 1024, 80 * 1024, 200 * 1024, 1024 * 1024] {
        let target = "/card.png?text=" + String(repeating: "a", count: length)
        let reply = try await exchange(port, "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        expectError(reply, status: 414)
        #expect(reply.header("Connection")?.lowercased() == "close", "\(length)")
      }
      let big = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 70_000))\r\n\r\n"
      expectError(try await exchange(port, big), status: 431)
      let fields = (0...HTTPLimits.maximumHeaderFields).map { "X-F\($0): 1\r\n" }.joined()
      expectError(try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\(fields)\r\n"), status: 431)
      expectError(try await exchange(port, "GET /healthz HTTP/1.1\r\nHost x\r\n\r\n"), status: 400)
    }
  }

  /// Past `maxConnections` a new connection gets a JSON 503 with Retry-After as soon as it
  /// opens, before it has sent a byte (nothing is parsed, nothing waits); once connections
  /// close, new ones are served again.
  @Test(.timeLimit(.minutes(5)))
  func connectionsPastTheCapGetA503BeforeAnyRequest() async throws {
    var configuration = testConfiguration()
    configuration.maxConnections = 3
    let retryAfter = configuration.retryAfterSeconds
    let logs = LogStore()
    try await withLiveServer(configuration: configuration, logs: logs, logLevel: .trace) { port, _ in
      let (statuses, refused) = try await onOwnThread { () -> ([Int], Reply?) in
        var open: [TestSocket] = []
        var statuses: [Int] = []
        for _ in 0..<3 {
          let socket = try TestSocket(port: port)
          try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
          statuses.append(try socket.readResponse(timeout: 20).status)
          open.append(socket)
        }
        // No request on this one: the answer comes unasked.
        let past = try TestSocket(port: port)
        return (statuses, try replyOf(past.readToEnd(timeout: 20)))
      }
      #expect(statuses == [200, 200, 200])
      let reply = try #require(refused)
      expectError(reply, status: 503)
      #expect(reply.header("Retry-After") == String(retryAfter))
      #expect(reply.header("Connection")?.lowercased() == "close")

      // The served ones are closed now (their sockets are gone): once the server has counted them
      // (and the refused one) closed, there is room again.
      let counted = await logs.waitForLine { $0.contains("connection closed") && $0.contains("open_connections=0") }
      #expect(counted != nil, "\(logs.lines.filter { $0.contains("connection closed") })")
      let status = try await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status
      #expect(status == 200, "closing connections must make room again")
    }
  }

  // MARK: Response side

  /// A reader slower than the body but steadily taking bytes gets the whole body, though the
  /// response takes longer than the idle timeout and the write timeout together; the log line
  /// counts the bytes written. (The body is larger than what loopback's kernel buffers hold.)
  @Test(.timeLimit(.minutes(3)))
  func steadySlowReaderGetsTheWholeBody() async throws {
    var configuration = testConfiguration()
    configuration.idleTimeoutSeconds = 1
    configuration.writeTimeoutSeconds = 3
    let logs = LogStore()
    try await withLiveServer(configuration: configuration, logs: logs) { port, _ in
      let bytes = try await onOwnThread {
        let socket = try TestSocket(port: port, receiveBuffer: 16_384)
        try socket.send("GET \(bigCard) HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try socket.readSome(timeout: 120)
        // About 2 MB/s: slower than the body for several idle timeouts, never stalled for long.
        try socket.readSlowly(chunk: 16_000, pause: 0.008, timeout: 60)
        return socket.received
      }
      let reply = try replyOf(bytes)
      expectCard(reply, format: "png", size: (4096, 4096))
      #expect(pngIsIntact(reply.body), "every chunk's CRC must match")
      let line = try #require(await logs.waitForLine { $0.contains("path=/cards/1.png") })
      #expect(line.contains("bytes=\(reply.body.count)"), "\(line)")
      #expect(!line.contains("complete=false"), "\(line)")
    }
  }

  // MARK: Shutdown

  /// Graceful shutdown (what SIGTERM starts): an idle keep-alive connection closes at once, new
  /// connections are refused, a render held in flight across the notice is answered whole with
  /// `Connection: close` once the test lets it finish, a slow reader gets every byte, and the
  /// server returns once all of that is written, before the drain limit.
  @Test(.timeLimit(.minutes(3)))
  func shutdownFinishesWhatItAccepted() async throws {
    var configuration = testConfiguration()
    configuration.drainTimeoutSeconds = 120
    let logs = LogStore()
    let renderer = HeldRenderer(base: try realRenderer())
    renderer.open()
    let server = try await LiveServer.start(renderer: renderer, configuration: configuration, logs: logs)
    let port = server.port

    let idle = try TestSocket(port: port)
    let reader = try TestSocket(port: port, receiveBuffer: 16_384)
    let inFlight = try TestSocket(port: port)
    try await onOwnThread {
      try idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      _ = try idle.readResponse(timeout: 20)
      try reader.send("GET \(bigCard) HTTP/1.1\r\nHost: x\r\n\r\n")
      // The first bytes of that body, then a render held in flight on another connection.
      _ = try reader.readSome(timeout: 120)
    }
    renderer.hold()
    try inFlight.send("GET /cards/5.png?w=300&h=300 HTTP/1.1\r\nHost: x\r\n\r\n")
    await renderer.waitForRenderToStart()

    let stopped = Task { await server.stop() }
    let idleClosed = try await onOwnThread { idle.sawEndOfFile(within: 30) }
    #expect(idleClosed, "an idle keep-alive connection closes at the notice")
    // The listening socket closes as the drain begins, at about the time the idle connection
    // does: a connection that still got in before it closed is closed by the server (it takes
    // nothing new), and each try waits for that close.
    var refused = false
    for _ in 0..<50 where !refused {
      guard let early = try? TestSocket(port: port) else {
        refused = true
        break
      }
      let closed = try await onOwnThread { early.sawEndOfFile(within: 30) }
      #expect(closed, "a connection that got in as the drain began is closed")
    }
    #expect(refused, "the listening socket is closed once the drain begins")
    #expect(!inFlight.hasBytes(), "the held render has not answered yet")

    renderer.open()
    let answered = try replyOf(try await onOwnThread { try inFlight.readToEnd(timeout: 60) })
    expectCard(answered, format: "png", size: (300, 300))
    #expect(answered.header("Connection")?.lowercased() == "close")

    try await onOwnThread { try reader.readSlowly(chunk: 16_000, pause: 0.008, timeout: 60) }
    let whole = try replyOf(reader.received)
    expectCard(whole, format: "png", size: (4096, 4096))
    #expect(pngIsIntact(whole.body))
    await stopped.value
    #expect(!logs.lines.contains { $0.contains("drain limit reached") }, "\(logs.lines)")
    #expect(!logs.lines.contains { $0.contains("complete=false") }, "\(logs.lines)")
  }

  /// The built binary: a 4096x4096 PNG downloaded at a slow rate across a SIGTERM arrives whole
  /// (every byte, every chunk's CRC, IHDR and IEND), and the process then exits 0. It used to
  /// exit within milliseconds of the signal, cutting the body.
  @Test(.timeLimit(.minutes(4)))
  func sigtermFinishesASlowDownload() async throws {
    let server = try await ServerProcess.start(arguments: ["serve", "--port", "0", "--drain-timeout", "120"])
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let socket = try TestSocket(port: port, receiveBuffer: 65_536)
    try await onOwnThread {
      try socket.send("GET \(bigCard) HTTP/1.1\r\nHost: x\r\n\r\n")
      _ = try socket.readSome(timeout: 150)
      // The signal comes about a megabyte in.
      while socket.received.count < 1_000_000 { _ = try socket.readSome(timeout: 10) }
    }
    server.signal(SIGTERM)
    let receivedAtSignal = socket.received.count
    try await onOwnThread { try socket.readSlowly(chunk: 65_536, pause: 0.03, timeout: 120) }
    let reply = try replyOf(socket.received)
    #expect(reply.status == 200)
    #expect(reply.header("Content-Length") == String(reply.body.count), "got \(reply.body.count) bytes")
    #expect(receivedAtSignal < reply.body.count, "the download was meant to outlast the signal")
    let size = imageDimensions(reply.body)
    #expect(size?.width == 4096 && size?.height == 4096)
    #expect(pngIsIntact(reply.body), "every chunk's CRC must match")
    let closed = try await onOwnThread { socket.sawEndOfFile(within: 30) }
    #expect(closed, "the server closes the connection after the response")
    let status = try await server.waitForExit(timeout: .seconds(60))
    #expect(status == 0, "exit status after SIGTERM; stderr: \(server.stderr)")
    #expect(!server.stderr.contains("complete=false"), "\(server.stderr)")
  }
}

/// A card larger than loopback's kernel buffers (about 10 MB), rendered once per server.
private let bigCard = "/cards/1.png?w=4096&h=4096"

/// Sends `head` on a new connection, then `drip(n)` every 100 ms: whether the server closed the
/// connection within 300 drips (30 s, a hang guard far past the limits the tests set).
private func closesWhileDripping(
  _ port: Int, head: String, drip: @escaping @Sendable (Int) -> String
) async throws -> Bool {
  try await onOwnThread { () -> Bool in
    let socket = try TestSocket(port: port)
    try socket.send(head)
    for step in 0..<300 {
      if (try? socket.send(drip(step))) == nil || socket.sawEndOfFile(within: 0.1) { return true }
    }
    return false
  }
}

/// One request on a new connection, read until the server closes.
private func exchange(_ port: Int, _ request: String) async throws -> Reply {
  try await onOwnThread {
    let socket = try TestSocket(port: port)
    // The server may answer before the whole request is sent; the answer still arrives.
    try? socket.send(request)
    return try replyOf(socket.readToEnd(timeout: 10))
  }
}

// MARK: A live server

/// Runs `body` against a live server of the real renderer, with the port.
private func withLiveServer(
  configuration: ServerConfiguration, logs: LogStore? = nil, logLevel: Logger.Level = .info,
  _ body: @Sendable (Int, LiveServer) async throws -> Void
) async throws {
  try await LiveServer.with(
    renderer: try realRenderer(), configuration: configuration, logs: logs ?? LogStore(), logLevel: logLevel, body)
}

/// The application as `buildApplication` makes it, in a service group of its own, so that a test
/// can trigger the graceful shutdown (what SIGTERM does) and see how long it takes.
final class LiveServer: Sendable {
  let port: Int
  private let group: ServiceGroup
  private let running: Task<Void, Never>
  private let shutdown: @Sendable () async throws -> Void

  private init(
    port: Int, group: ServiceGroup, running: Task<Void, Never>, shutdown: @escaping @Sendable () async throws -> Void
  ) {
    self.port = port
    self.group = group
    self.running = running
    self.shutdown = shutdown
  }

  static func start<Renderer: CardRendering>(
    renderer: Renderer, configuration base: ServerConfiguration, logs: LogStore, logLevel: Logger.Level = .info
  ) async throws -> LiveServer {
    var configuration = base
    configuration.port = 0
    let service = CardService(renderer: renderer, configuration: configuration, logger: quietLogger)
    var logger = Logger(label: "innerpeace-test") { _ in CapturingLogHandler(store: logs) }
    logger.logLevel = logLevel
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = buildApplication(service: service, logger: logger) { port in continuation.yield(port) }
    let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
    let running = Task { _ = try? await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw RawHTTPError(description: "the server did not start") }
    return LiveServer(port: port, group: group, running: running) { try await service.shutdown() }
  }

  /// Runs `body` against a live server (its port, and the server), stopping it also when `body`
  /// throws.
  static func with<Renderer: CardRendering>(
    renderer: Renderer, configuration: ServerConfiguration, logs: LogStore = LogStore(),
    logLevel: Logger.Level = .info, _ body: @Sendable (Int, LiveServer) async throws -> Void
  ) async throws {
    let server = try await start(renderer: renderer, configuration: configuration, logs: logs, logLevel: logLevel)
    do {
      try await body(server.port, server)
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
  }

  /// Graceful shutdown; returns once the server has stopped.
  func stop() async {
    await group.triggerGracefulShutdown()
    await running.value
    try? await shutdown()
  }
}

// MARK: Logs

/// Log lines, as `key=value` text, for tests to read.
final class LogStore: Sendable {
  private let store = Watched<[String]>([])
  var lines: [String] { store.value }
  func append(_ line: String) { store.update { $0.append(line) } }

  /// The first line matching, as soon as it is logged; nil if none comes within `timeout` (a
  /// hang guard).
  func waitForLine(timeout: Duration = .seconds(20), _ matches: @escaping @Sendable (String) -> Bool) async -> String? {
    await store.wait(timeout: timeout) { lines in lines.first(where: matches) }
  }
}

struct CapturingLogHandler: LogHandler {
  let store: LogStore
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .info
  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }
  func log(event: LogEvent) {
    let merged = metadata.merging(event.metadata ?? [:]) { $1 }
    let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    store.append("\(event.level) \(event.message) \(fields)")
  }
}

// MARK: A raw loopback socket

/// A blocking loopback TCP socket that sends and reads exactly what a test says, when it says.
final class TestSocket: @unchecked Sendable {
  let descriptor: Int32
  /// Everything read so far.
  private(set) var received: [UInt8] = []

  /// Connects to 127.0.0.1:`port`; `receiveBuffer` makes the kernel's receive buffer small, so
  /// that a slow reader is slow on the wire too; `source` is the local address (another client).
  init(port: Int, receiveBuffer: Int32? = nil, source: String? = nil) throws {
    descriptor = try loopbackSocket(port: port, receiveBuffer: receiveBuffer, source: source)
  }

  deinit { close(descriptor) }

  func send(_ text: String) throws { try send(Array(text.utf8)) }

  /// Sends all of `bytes`, or throws when the peer has closed or reset.
  func send(_ bytes: [UInt8]) throws {
    var sent = 0
    while sent < bytes.count {
      let count = bytes[sent...].withUnsafeBytes {
        systemSend(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      guard count > 0 else {
        if errno == EINTR { continue }
        throw RawHTTPError(description: "send failed: errno \(errno)")
      }
      sent += count
    }
  }

  /// Reads what is there within `timeout` seconds: nil at end of file (or reset), [] on timeout.
  private func readOnce(timeout: Double, limit: Int = 65_536) throws -> [UInt8]? {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    let ready = poll(&poller, 1, Int32(timeout * 1000))
    if ready == 0 { return [] }
    guard ready > 0 else {
      if errno == EINTR { return [] }
      throw RawHTTPError(description: "poll failed: errno \(errno)")
    }
    var buffer = [UInt8](repeating: 0, count: limit)
    let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
    if count == 0 { return nil }
    if count < 0 {
      if errno == EINTR || errno == EAGAIN { return [] }
      return nil
    }
    received += buffer[0..<count]
    return Array(buffer[0..<count])
  }

  /// Whether bytes (or the end of file) are waiting to be read, without reading them.
  func hasBytes() -> Bool {
    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&poller, 1, 0) > 0
  }

  /// Whether the peer closed (end of file or reset) within `seconds`, reading what comes.
  func sawEndOfFile(within seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
      guard let chunk = try? readOnce(timeout: max(0, min(0.05, deadline.timeIntervalSinceNow))) else { return true }
      if chunk.isEmpty && Date() >= deadline { return false }
    } while true
  }

  /// The first bytes that arrive.
  func readSome(timeout: Double) throws -> [UInt8] {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      guard let chunk = try readOnce(timeout: 0.1) else { break }
      if !chunk.isEmpty { return chunk }
    }
    throw RawHTTPError(description: "nothing arrived within \(timeout) s")
  }

  /// Everything until the peer closes.
  func readToEnd(timeout: Double) throws -> [UInt8] {
    let deadline = Date().addingTimeInterval(timeout)
    var bytes: [UInt8] = []
    while true {
      guard Date() < deadline else { throw RawHTTPError(description: "no end of file within \(timeout) s") }
      guard let chunk = try readOnce(timeout: 0.1) else { return bytes }
      bytes += chunk
    }
  }

  /// Until the peer closes or the first response is whole, at most `chunk` bytes per read with
  /// `pause` seconds between reads (what arrives goes to ``received``).
  func readSlowly(chunk: Int, pause: Double, timeout: Double) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      guard Date() < deadline else { throw RawHTTPError(description: "slow read not over within \(timeout) s") }
      guard try readOnce(timeout: 0.5, limit: chunk) != nil else { return }
      if let head = try? RawHTTPConnection.parse(received), let length = Int(head.header("content-length") ?? ""),
        head.body.count >= length
      {
        return
      }
      // Pacing: this is the slow client (a wait for nothing).
      Thread.sleep(forTimeInterval: pause)
    }
  }

  /// One response (head and Content-Length body) on a connection that may stay open.
  func readResponse(timeout: Double) throws -> Reply {
    let deadline = Date().addingTimeInterval(timeout)
    let start = received.count
    while Date() < deadline {
      let bytes = Array(received[start...])
      if let head = try? RawHTTPConnection.parse(bytes), let length = Int(head.header("content-length") ?? ""),
        head.body.count >= length
      {
        return try replyOf(bytes)
      }
      guard let _ = try readOnce(timeout: 0.1) else { return try replyOf(Array(received[start...])) }
    }
    throw RawHTTPError(description: "no whole response within \(timeout) s")
  }
}

#if canImport(Glibc)
  private let systemSend = Glibc.send
#else
  private let systemSend = Darwin.send
#endif

/// Raw response bytes as a ``Reply``.
func replyOf(_ bytes: [UInt8]) throws -> Reply {
  let raw = try RawHTTPConnection.parse(bytes)
  var fields = HTTPFields()
  for (name, value) in raw.headers {
    if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
  }
  let length = Int(raw.header("content-length") ?? "") ?? raw.body.count
  return Reply(status: raw.status, headers: fields, body: Array(raw.body.prefix(length)), elapsed: .zero)
}

/// Whether a PNG is whole: signature, every chunk's CRC, IHDR first and IEND last.
func pngIsIntact(_ bytes: [UInt8]) -> Bool {
  guard imageKind(bytes) == "png" else { return false }
  var at = 8
  var first = true
  while at + 12 <= bytes.count {
    let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
    guard at + 12 + length <= bytes.count else { return false }
    let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
    if first && type != "IHDR" { return false }
    first = false
    let crc = bytes[at + 8 + length..<at + 12 + length].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard crc32(bytes[at + 4..<at + 8 + length]) == crc else { return false }
    at += 12 + length
    if type == "IEND" { return at == bytes.count }
  }
  return false
}

private let crcTable: [UInt32] = (0..<256).map { n in
  var c = UInt32(n)
  for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
  return c
}

func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
  var c: UInt32 = 0xFFFF_FFFF
  for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
  return c ^ 0xFFFF_FFFF
}
