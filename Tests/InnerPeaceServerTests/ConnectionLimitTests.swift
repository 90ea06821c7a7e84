import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Logging
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every phase of a connection has a limit, and a shutdown finishes what it accepted: tests on
/// a live loopback server with short timeouts, driven with plain sockets.
@Suite struct ConnectionLimitTests {
  // MARK: Request side

  /// A head with `Content-Length: 100000` then a byte every 100 ms: each byte used to restart
  /// the idle timer, so the connection was held forever. The body timeout closes it.
  @Test(.timeLimit(.minutes(1)))
  func slowBodyIsClosedAtTheBodyTimeout() async throws {
    var configuration = testConfiguration()
    configuration.bodyTimeoutSeconds = 1
    try await withLiveServer(configuration: configuration) { port, _ in
      let socket = try TestSocket(port: port)
      try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
      let started = ContinuousClock.now
      var closed = false
      for _ in 0..<60 where !closed {
        if (try? socket.send("a")) == nil || socket.sawEndOfFile(within: 0.1) { closed = true }
      }
      #expect(closed, "still open after 6 s of a slow body")
      #expect(ContinuousClock.now - started < .seconds(4))
    }
  }

  /// A head sent a header line at a time (slowloris): closed at the header timeout.
  @Test(.timeLimit(.minutes(1)))
  func slowHeadIsClosedAtTheHeaderTimeout() async throws {
    var configuration = testConfiguration()
    configuration.headerTimeoutSeconds = 1
    try await withLiveServer(configuration: configuration) { port, _ in
      let socket = try TestSocket(port: port)
      try socket.send("GET /healthz HTTP/1.1\r\n")
      let started = ContinuousClock.now
      var closed = false
      for line in 0..<60 where !closed {
        if (try? socket.send("X-Slow-\(line): 1\r\n")) == nil || socket.sawEndOfFile(within: 0.1) { closed = true }
      }
      #expect(closed, "still open after 6 s of a slow head")
      #expect(ContinuousClock.now - started < .seconds(4))
    }
  }

  /// HTTP/1.0 without keep-alive: the connection closes after the response, not after the idle
  /// timeout (30 s here).
  @Test(.timeLimit(.minutes(1)))
  func http10IsClosedAfterItsResponse() async throws {
    try await withLiveServer(configuration: testConfiguration()) { port, _ in
      let socket = try TestSocket(port: port)
      try socket.send("GET /healthz HTTP/1.0\r\n\r\n")
      let started = ContinuousClock.now
      let response = try socket.readToEnd(timeout: 5)
      #expect(ContinuousClock.now - started < .seconds(3))
      let parsed = try RawHTTPConnection.parse(response)
      #expect(parsed.status == 200)
      #expect(parsed.header("connection")?.lowercased() == "close")
      #expect(parsed.header("content-length") == String(parsed.body.count))
    }
  }

  /// A URI over the limit gets the JSON 414 at every length: through the router up to NIO's
  /// head limit, from the connection past it; an oversized header block gets a JSON 431.
  @Test(.timeLimit(.minutes(1)))
  func overlongURIsGetJSON414AtEveryLength() async throws {
    try await withLiveServer(configuration: testConfiguration()) { port, _ in
      for length in [33 * 1024, 80 * 1024, 200 * 1024, 1024 * 1024] {
        let socket = try TestSocket(port: port)
        let target = "/card.png?text=" + String(repeating: "a", count: length)
        // The server may answer before the whole request is sent; the answer still arrives.
        try? socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let reply = try replyOf(socket.readToEnd(timeout: 10))
        expectError(reply, status: 414)
        #expect(reply.header("Connection")?.lowercased() == "close", "\(length)")
      }
      let big = try TestSocket(port: port)
      try? big.send(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 70_000))\r\n\r\n")
      expectError(try replyOf(big.readToEnd(timeout: 10)), status: 431)

      let many = try TestSocket(port: port)
      let fields = (0...HTTPLimits.maximumHeaderFields).map { "X-F\($0): 1\r\n" }.joined()
      try? many.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\(fields)\r\n")
      expectError(try replyOf(many.readToEnd(timeout: 10)), status: 431)

      let garbage = try TestSocket(port: port)
      try? garbage.send("GET /healthz HTTP/1.1\r\nHost x\r\n\r\n")
      expectError(try replyOf(garbage.readToEnd(timeout: 10)), status: 400)
    }
  }

  /// Past `maxConnections` a new connection gets an immediate JSON 503 with Retry-After; once
  /// connections close, new ones are served again.
  @Test(.timeLimit(.minutes(1)))
  func connectionsPastTheCapGetAFast503() async throws {
    var configuration = testConfiguration()
    configuration.maxConnections = 3
    try await withLiveServer(configuration: configuration) { port, _ in
      var open: [TestSocket] = []
      var refused: (Reply, Duration)?
      for _ in 0..<5 where refused == nil {
        let socket = try TestSocket(port: port)
        let started = ContinuousClock.now
        try? socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try socket.readResponse(timeout: 5)
        if head.status == 503 {
          refused = (head, ContinuousClock.now - started)
        } else {
          #expect(head.status == 200)
          open.append(socket)
        }
      }
      let (reply, elapsed) = try #require(refused, "no 503 past 3 connections")
      #expect(open.count == 3)
      expectError(reply, status: 503)
      #expect(reply.header("Retry-After") == String(configuration.retryAfterSeconds))
      #expect(elapsed < .seconds(1))

      open.removeAll()
      var served = false
      for _ in 0..<50 where !served {
        let socket = try TestSocket(port: port)
        try? socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        served = (try? socket.readResponse(timeout: 5).status) == 200
        if !served { try await Task.sleep(for: .milliseconds(50)) }
      }
      #expect(served, "closing connections must make room again")
    }
  }

  // MARK: Response side

  /// A reader slower than the body but steadily taking bytes gets the whole body, though the
  /// response takes longer than the idle timeout and the write timeout together; the log line
  /// counts the bytes written.
  @Test(.timeLimit(.minutes(2)))
  func steadySlowReaderGetsTheWholeBody() async throws {
    var configuration = testConfiguration()
    configuration.idleTimeoutSeconds = 1
    configuration.writeTimeoutSeconds = 1
    let logs = LogStore()
    try await withLiveServer(configuration: configuration, logs: logs) { port, _ in
      let socket = try TestSocket(port: port, receiveBuffer: 16_384)
      try socket.send("GET /cards/2.png?w=2048&h=2048 HTTP/1.1\r\nHost: x\r\n\r\n")
      let started = ContinuousClock.now
      // About 600 KB/s with pauses well under the write timeout.
      try socket.readSlowly(chunk: 12_000, pause: 0.02, timeout: 60)
      let reply = try replyOf(socket.received)
      #expect(ContinuousClock.now - started > .seconds(2), "the reader was meant to be slower than the timeouts")
      expectCard(reply, format: "png", size: (2048, 2048))
      #expect(pngIsIntact(reply.body), "every chunk's CRC must match")
      let line = try #require(await logs.waitForLine { $0.contains("path=/cards/2.png") })
      #expect(line.contains("bytes=\(reply.body.count)"), "\(line)")
      #expect(!line.contains("complete=false"), "\(line)")
    }
  }

  /// A reader that stops reading: the connection closes once the socket has taken nothing for
  /// the write timeout, and the log line says the response was cut, with the bytes written.
  @Test(.timeLimit(.minutes(1)))
  func stalledReaderIsClosedAtTheWriteTimeoutAndLoggedAsCut() async throws {
    var configuration = testConfiguration()
    configuration.writeTimeoutSeconds = 1
    let logs = LogStore()
    try await withLiveServer(configuration: configuration, logs: logs) { port, _ in
      let socket = try TestSocket(port: port, receiveBuffer: 16_384)
      try socket.send("GET /cards/3.png?w=2048&h=2048 HTTP/1.1\r\nHost: x\r\n\r\n")
      let line = try #require(
        await logs.waitForLine(timeout: .seconds(30)) { $0.contains("path=/cards/3.png") },
        "no log line: \(logs.lines)")
      #expect(line.contains("complete=false"), "\(line)")
      let written = Int(line.firstMatch(of: /bytes=(\d+)/)?.1 ?? "") ?? -1
      let announced = Int(line.firstMatch(of: /of=(\d+)/)?.1 ?? "") ?? -1
      #expect(written >= 0 && written < announced, "\(line)")
      #expect(socket.sawEndOfFile(within: 5), "the server closes the connection it gave up on")
    }
  }

  // MARK: Shutdown

  /// Graceful shutdown: an idle keep-alive connection closes at once, a request in flight is
  /// answered with `Connection: close`, a slow reader gets every byte, and the server returns
  /// once all of that is written; a reader that never reads is closed at the drain limit.
  @Test(.timeLimit(.minutes(2)))
  func shutdownFinishesWhatItAccepted() async throws {
    var configuration = testConfiguration()
    configuration.drainTimeoutSeconds = 8
    let logs = LogStore()
    let renderer = SlowRenderer(base: try realRenderer(), delay: 1.5)
    let server = try await LiveServer.start(renderer: renderer, configuration: configuration, logs: logs)
    let port = server.port

    let idle = try TestSocket(port: port)
    try idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(try idle.readResponse(timeout: 5).status == 200)

    let reader = try TestSocket(port: port, receiveBuffer: 16_384)
    try reader.send("GET /cards/4.png?w=1600&h=1600 HTTP/1.1\r\nHost: x\r\n\r\n")
    // Wait for the first bytes of that body, then ask for a slow render on another connection.
    _ = try reader.readSome(timeout: 30)
    let inFlight = try TestSocket(port: port)
    try inFlight.send("GET /cards/5.png?w=300&h=300 HTTP/1.1\r\nHost: x\r\n\r\n")
    try await Task.sleep(for: .milliseconds(300))

    let signalled = ContinuousClock.now
    let stopped = Task { await server.stop() }
    #expect(idle.sawEndOfFile(within: 2), "an idle keep-alive connection closes at once")
    let answered = try replyOf(inFlight.readToEnd(timeout: 20))
    expectCard(answered, format: "png", size: (300, 300))
    #expect(answered.header("Connection")?.lowercased() == "close")

    try reader.readSlowly(chunk: 16_000, pause: 0.01, timeout: 30)
    let whole = try replyOf(reader.received)
    expectCard(whole, format: "png", size: (1600, 1600))
    #expect(pngIsIntact(whole.body))
    await stopped.value
    #expect(ContinuousClock.now - signalled < .seconds(8), "everything was written: no need to wait for the limit")
  }

  @Test(.timeLimit(.minutes(1)))
  func drainLimitClosesWhatIsLeft() async throws {
    var configuration = testConfiguration()
    configuration.drainTimeoutSeconds = 1
    configuration.writeTimeoutSeconds = 60
    let logs = LogStore()
    let server = try await LiveServer.start(
      renderer: try realRenderer(), configuration: configuration, logs: logs)
    let stuck = try TestSocket(port: server.port, receiveBuffer: 4096)
    try stuck.send("GET /cards/6.png?w=2048&h=2048 HTTP/1.1\r\nHost: x\r\n\r\n")
    _ = try stuck.readSome(timeout: 30)
    let signalled = ContinuousClock.now
    await server.stop()
    #expect(ContinuousClock.now - signalled < .seconds(5))
    #expect(logs.lines.contains { $0.contains("drain limit reached") }, "\(logs.lines)")
    #expect(logs.lines.contains { $0.contains("path=/cards/6.png") && $0.contains("complete=false") })
  }
}

// MARK: A live server

/// Runs `body` against a live server of the real renderer, with the port.
private func withLiveServer(
  configuration: ServerConfiguration, logs: LogStore? = nil,
  _ body: @Sendable (Int, LiveServer) async throws -> Void
) async throws {
  let server = try await LiveServer.start(
    renderer: try realRenderer(), configuration: configuration, logs: logs ?? LogStore())
  do {
    try await body(server.port, server)
  } catch {
    await server.stop()
    throw error
  }
  await server.stop()
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
    renderer: Renderer, configuration base: ServerConfiguration, logs: LogStore
  ) async throws -> LiveServer {
    var configuration = base
    configuration.port = 0
    let service = CardService(renderer: renderer, configuration: configuration, logger: quietLogger)
    let logger = Logger(label: "innerpeace-test") { _ in CapturingLogHandler(store: logs) }
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = buildApplication(service: service, logger: logger) { port in continuation.yield(port) }
    let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
    let running = Task { try? await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw RawHTTPError(description: "the server did not start") }
    return LiveServer(port: port, group: group, running: running) { try await service.shutdown() }
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
  private let store = Mutex<[String]>([])
  var lines: [String] { store.withLock { $0 } }
  func append(_ line: String) { store.withLock { $0.append(line) } }

  /// The first line matching, waiting up to `timeout` for it.
  func waitForLine(timeout: Duration = .seconds(20), _ matches: (String) -> Bool) async -> String? {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let line = lines.first(where: matches) { return line }
      try? await Task.sleep(for: .milliseconds(20))
    }
    return nil
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
  func log(
    level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?, source: String, file: String,
    function: String, line: UInt
  ) {
    let merged = metadata.merging(extra ?? [:]) { $1 }
    let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    store.append("\(level) \(message) \(fields)")
  }
}

// MARK: A raw loopback socket

/// A blocking loopback TCP socket that sends and reads exactly what a test says, when it says.
final class TestSocket: @unchecked Sendable {
  let descriptor: Int32
  /// Everything read so far.
  private(set) var received: [UInt8] = []

  /// Connects to 127.0.0.1:`port`; `receiveBuffer` makes the kernel's receive buffer small, so
  /// that a slow reader is slow on the wire too.
  init(port: Int, receiveBuffer: Int32? = nil) throws {
    descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw RawHTTPError(description: "socket() failed") }
    if var size = receiveBuffer {
      setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(descriptor)
      throw RawHTTPError(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
    }
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
