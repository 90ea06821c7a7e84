import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import InnerPeaceServer

/// The connection's handlers in their pipeline (``GuardedHTTP1Channel/addHTTPHandlers``) on an
/// `EmbeddedChannel`: time moves only when the test advances the event loop, in milliseconds, so
/// every limit is checked to the millisecond and no test waits.
@Suite struct ConnectionGuardTests {
  /// One connection: the socket's side held by ``HeldWrites``, the router's by ``TestResponder``.
  struct Connection {
    let loop: EmbeddedEventLoop
    let channel: EmbeddedChannel
    let socket: HeldWrites
    let responder: TestResponder
    let logs: LogStore

    init(
      limits: ConnectionLimits = ConnectionDeadlinesTests.limits, bodyBytes: Int = 10, holdsAnswers: Bool = false,
      answersAtHead: Bool = false
    ) throws {
      let loop = EmbeddedEventLoop()
      let socket = HeldWrites()
      let responder = TestResponder(bodyBytes: bodyBytes, holdsAnswers: holdsAnswers, answersAtHead: answersAtHead)
      let logs = LogStore()
      let channel = EmbeddedChannel(loop: loop)
      (self.loop, self.channel, self.socket, self.responder, self.logs) = (loop, channel, socket, responder, logs)
      let logger = Logger(label: "connection-test") { _ in CapturingLogHandler(store: logs) }
      let pipeline = channel.pipeline.syncOperations
      try pipeline.addHandler(socket)
      try GuardedHTTP1Channel.addHTTPHandlers(to: pipeline, limits: limits, logger: logger)
      try pipeline.addHandler(responder)
      channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080), promise: nil)
    }

    func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }
    func advance(_ milliseconds: Int64) { loop.advanceTime(by: .milliseconds(milliseconds)) }
    var isOpen: Bool { channel.isActive }

    /// Everything the socket has taken so far, as text.
    func written() throws -> String {
      var bytes: [UInt8] = []
      while let data = try channel.readOutbound(as: IOData.self) {
        if case .byteBuffer(let buffer) = data { bytes += buffer.readableBytesView }
      }
      return String(decoding: bytes, as: UTF8.self)
    }
  }

  // MARK: Request side

  /// A head sent a header line every 50 ms is closed at the header timeout (200 ms) from its
  /// first byte, unanswered and not logged as a request.
  @Test func slowHeadIsClosedAtTheHeaderTimeout() throws {
    let connection = try Connection()
    connection.advance(100)
    try connection.send("GET /healthz HTTP/1.1\r\n")
    for line in 0..<3 {
      connection.advance(50)
      try connection.send("X-Slow-\(line): 1\r\n")
    }
    connection.advance(49)
    #expect(connection.isOpen)
    connection.advance(1)
    #expect(!connection.isOpen)
    #expect(try connection.written().isEmpty)
    #expect(connection.logs.lines.contains { $0.contains("request head too slow") })
    #expect(!connection.logs.lines.contains { $0.contains("request ") && $0.contains("path=") })
  }

  /// A head, then a body a byte every 20 ms: closed at the body timeout (250 ms) from the head,
  /// and the request is logged once, as a 408.
  @Test func slowBodyIsClosedAtTheBodyTimeoutAndLoggedAs408() throws {
    let connection = try Connection()
    try connection.send("POST /cards/2.png HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
    for _ in 0..<12 {
      connection.advance(20)
      try connection.send("a")
    }
    connection.advance(9)
    #expect(connection.isOpen)
    connection.advance(1)
    #expect(!connection.isOpen)
    let requests = connection.logs.lines.filter { $0.contains("path=/cards/2.png") }
    #expect(requests.count == 1, "\(connection.logs.lines)")
    #expect(requests.first?.contains("status=408") == true, "\(requests)")
    #expect(!connection.logs.lines.contains { $0.contains("complete=false") })
    #expect(connection.responder.requests == 0, "the body never ended: the router got no request")
  }

  /// A slow body on a request the router answers late (after the body timeout; Hummingbird
  /// hands the router the head before the body ends): the connection closes at the timeout, the
  /// request is logged once, as a 408 with its route, and the late answer, which has nowhere to
  /// go, is not logged again (it was once logged as a cut `200`).
  @Test func slowBodyBeforeALateAnswerIsLoggedOnceAs408() throws {
    let connection = try Connection(holdsAnswers: true, answersAtHead: true)
    let record = RequestRecord()
    record.route = "/cards/{quote}"
    try connection.channel.pipeline.syncOperations.handler(type: ConnectionGuard.self).expect(record)
    try connection.send("GET /cards/2.png HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
    try connection.send("a")
    connection.advance(250)
    #expect(!connection.isOpen)
    connection.responder.answer()
    connection.socket.release()
    let requests = connection.logs.lines.filter { $0.contains("path=/cards/2.png") }
    #expect(requests.count == 1, "\(connection.logs.lines)")
    #expect(requests.first?.contains("status=408") == true, "\(requests)")
    #expect(requests.first?.contains("route=/cards/{quote}") == true, "\(requests)")
    #expect(!connection.logs.lines.contains { $0.contains("complete=false") }, "\(connection.logs.lines)")
  }

  /// A kept-alive connection is closed at the idle timeout (300 ms) counted from the last byte
  /// of the last response taken by the socket, not from when it was handed over.
  @Test func idleCountsFromTheLastByteOnTheWire() throws {
    var limits = ConnectionDeadlinesTests.limits
    limits.write = .seconds(10)
    let connection = try Connection(limits: limits)
    try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(connection.socket.heldCount > 0)
    connection.advance(1_000)
    #expect(connection.isOpen, "the response is still being written")
    connection.socket.release()
    #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
    connection.advance(299)
    #expect(connection.isOpen)
    connection.advance(1)
    #expect(!connection.isOpen)
  }

  // MARK: Response side

  /// A reader that takes a slice of the body every 90 ms (under the 100 ms write timeout) gets
  /// all of a 200 KB body though that takes over a second, over three idle timeouts; the log
  /// counts every byte.
  @Test func steadySlowReaderGetsTheWholeBody() throws {
    let connection = try Connection(bodyBytes: 200_000)
    try connection.send("GET /cards/1.png HTTP/1.1\r\nHost: x\r\n\r\n")
    var steps = 0
    var taken = ""
    while connection.socket.heldCount > 0 {
      connection.advance(90)
      #expect(connection.isOpen, "step \(steps)")
      connection.socket.release(count: 1)
      taken += try connection.written()
      steps += 1
    }
    #expect(steps * 90 > 3 * 300, "\(steps) slices")
    #expect(taken.hasSuffix(String(repeating: "x", count: 200_000)))
    let line = try #require(connection.logs.lines.first { $0.contains("path=/cards/1.png") })
    #expect(line.contains("bytes=200000"), "\(line)")
    #expect(!line.contains("complete=false"), "\(line)")
    #expect(connection.isOpen, "kept alive")
  }

  /// A reader that stops reading: closed once the socket has taken nothing for the write timeout,
  /// and the log line says the response was cut, with the bytes written of those announced.
  @Test func stalledReaderIsClosedAtTheWriteTimeoutAndLoggedAsCut() throws {
    let connection = try Connection(bodyBytes: 100_000)
    try connection.send("GET /cards/1.png HTTP/1.1\r\nHost: x\r\n\r\n")
    connection.socket.release(count: 3)
    connection.advance(99)
    #expect(connection.isOpen)
    connection.advance(1)
    #expect(!connection.isOpen)
    let line = try #require(connection.logs.lines.first { $0.contains("path=/cards/1.png") })
    #expect(line.contains("complete=false"), "\(line)")
    let written = Int(line.firstMatch(of: /bytes=(\d+)/)?.1 ?? "") ?? -1
    #expect(written > 0 && written < 100_000, "\(line)")
    #expect(line.contains("of=100000"), "\(line)")
    #expect(connection.logs.lines.contains { $0.contains("response not read") })
  }

  // MARK: Drain

  /// A drain notice closes an idle connection at once.
  @Test func drainClosesAnIdleConnectionAtOnce() throws {
    let connection = try Connection()
    connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    #expect(!connection.isOpen)
  }

  /// A request in flight at the drain notice is answered, with `Connection: close`, however long
  /// it takes within the drain limit; then the connection closes. Nothing after it is read.
  @Test func drainFinishesTheRequestInFlight() throws {
    var limits = ConnectionDeadlinesTests.limits
    limits.drain = .seconds(5)
    let connection = try Connection(limits: limits, holdsAnswers: true)
    try connection.send("GET /cards/5.png HTTP/1.1\r\nHost: x\r\n\r\n")
    connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    connection.advance(4_000)
    #expect(connection.isOpen, "in flight")
    try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    connection.responder.answer()
    connection.socket.release()
    let written = try connection.written()
    #expect(written.hasPrefix("HTTP/1.1 200 OK"))
    #expect(written.lowercased().contains("connection: close"))
    #expect(!connection.isOpen)
    #expect(connection.responder.requests == 1, "the request after the notice is not taken")
  }

  /// A response still unread at the drain limit is cut there, and logged.
  @Test func drainLimitClosesWhatIsLeft() throws {
    var limits = ConnectionDeadlinesTests.limits
    limits.write = .seconds(60)
    let connection = try Connection(limits: limits, bodyBytes: 100_000)
    try connection.send("GET /cards/1.png HTTP/1.1\r\nHost: x\r\n\r\n")
    connection.advance(1_000)
    connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    connection.advance(499)
    #expect(connection.isOpen)
    connection.advance(1)
    #expect(!connection.isOpen)
    #expect(connection.logs.lines.contains { $0.contains("drain limit reached") }, "\(connection.logs.lines)")
    #expect(connection.logs.lines.contains { $0.contains("path=/cards/1.png") && $0.contains("complete=false") })
  }

  // MARK: Heads NIO's parser refuses

  /// A request line over the head limit is a JSON 414; a header block over it a JSON 431; each
  /// closes the connection once written.
  @Test func overlongHeadsGetJSON414And431() throws {
    for (request, status) in [
      ("GET /card.png?text=\(String(repeating: "a", count: 70_000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
      ("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 70_000))\r\n\r\n", 431),
      (
        "GET /healthz HTTP/1.1\r\nHost: x\r\n"
          + (0...HTTPLimits.maximumHeaderFields).map { "X-F\($0): 1\r\n" }.joined() + "\r\n", 431
      ),
    ] {
      let connection = try Connection()
      try connection.send(request)
      connection.socket.release()
      let reply = try replyOf(Array(try connection.written().utf8))
      expectError(reply, status: status)
      #expect(reply.header("Connection")?.lowercased() == "close")
      #expect(!connection.isOpen)
      #expect(connection.responder.requests == 0)
    }
  }
}

/// The socket's side of an embedded connection: holds what is written until the test releases
/// it (a reader that takes bytes when the test says); on close, fails what it still holds, as a
/// socket does.
final class HeldWrites: ChannelOutboundHandler, RemovableChannelHandler {
  typealias OutboundIn = IOData
  typealias OutboundOut = IOData
  private var held: [(IOData, EventLoopPromise<Void>?)] = []
  private var context: ChannelHandlerContext?

  var heldCount: Int { held.count }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    held.append((unwrapOutboundIn(data), promise))
  }

  func flush(context: ChannelHandlerContext) {}

  /// Hands the oldest `count` writes (all by default) to the socket, which takes them at once.
  func release(count: Int = .max) {
    guard let context else { return }
    for _ in 0..<min(count, held.count) {
      let (data, promise) = held.removeFirst()
      context.write(wrapOutboundOut(data), promise: promise)
    }
    context.flush()
  }

  func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
    let pending = held
    held = []
    for (_, promise) in pending { promise?.fail(ChannelError.ioOnClosedChannel) }
    context.close(mode: mode, promise: promise)
  }
}

/// The router's side: answers each whole request (or each head) with a 200 of `bodyBytes` bytes
/// of `x`, at once or when the test says.
final class TestResponder: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart
  let bodyBytes: Int
  let holdsAnswers: Bool
  let answersAtHead: Bool
  /// Requests received (whole, or heads when it answers at the head).
  private(set) var requests = 0
  private var owed = 0
  private var context: ChannelHandlerContext?

  init(bodyBytes: Int, holdsAnswers: Bool, answersAtHead: Bool) {
    self.bodyBytes = bodyBytes
    self.holdsAnswers = holdsAnswers
    self.answersAtHead = answersAtHead
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head where answersAtHead, .end where !answersAtHead: break
    default: return
    }
    requests += 1
    owed += 1
    if !holdsAnswers { answer() }
  }

  /// Answers the oldest request not answered yet.
  func answer() {
    guard let context, owed > 0 else { return }
    owed -= 1
    var head = HTTPResponseHead(version: .http1_1, status: .ok)
    head.headers.add(name: "Content-Length", value: String(bodyBytes))
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: bodyBytes)
    context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
  }
}
