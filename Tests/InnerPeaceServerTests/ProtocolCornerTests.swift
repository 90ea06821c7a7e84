import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import InnerPeace
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Testing

@testable import InnerPeaceServer

/// Requests at the edges of HTTP/1.1: methods the service does not serve, transfer codings it
/// cannot read, upgrades, and what a connection does after them. Driven with raw sockets on a
/// live server; each ends with an answer and a clean close, never a wait for the idle timeout.
@Suite(.serialized, .tags(.live)) struct ProtocolCornerTests {
  // MARK: What the connection answers itself

  @Test func connectAndUnknownCodingsAreRefusedByTheConnection() {
    func head(_ method: HTTPMethod, _ uri: String, _ headers: [(String, String)] = []) -> HTTPRequestHead {
      HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(headers))
    }
    #expect(ConnectionGuard.refusal(of: head(.CONNECT, "example.com:443"))?.status == .methodNotAllowed)
    #expect(ConnectionGuard.refusal(of: head(.CONNECT, "example.com:443"))?.allow == "GET, HEAD")
    for coding in ["xchunked", "gzip, chunked", "chunked, chunked", "identity", "chunked;q=1"] {
      let refusal = ConnectionGuard.refusal(of: head(.POST, "/healthz", [("Transfer-Encoding", coding)]))
      #expect(refusal?.status == .notImplemented, "\(coding)")
    }
    #expect(ConnectionGuard.refusal(of: head(.POST, "/healthz", [("Transfer-Encoding", " Chunked ")])) == nil)
    #expect(ConnectionGuard.refusal(of: head(.GET, "/healthz")) == nil)
    #expect(ConnectionGuard.refusal(of: head(.TRACE, "/healthz")) == nil, "the router answers it")
  }

  @Test func upgradesEndTheConnection() {
    func head(_ headers: [(String, String)]) -> HTTPRequestHead {
      HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: HTTPHeaders(headers))
    }
    #expect(ConnectionGuard.endsParsing(head([("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c")])))
    #expect(!ConnectionGuard.endsParsing(head([("Upgrade", "h2c")])))
    #expect(!ConnectionGuard.endsParsing(head([("Connection", "upgrade")])))
    #expect(!ConnectionGuard.endsParsing(head([])))
  }

  // MARK: Live

  /// `CONNECT` was a 404 without a body or a length, and the request pipelined after it never
  /// got an answer (NIO's parser reads nothing after a CONNECT): the connection sat until the
  /// idle timeout. Now a JSON 405 with its length, `Allow` and `Connection: close`, then the
  /// connection closes.
  @Test(.timeLimit(.minutes(5)))
  func connectIsA405AndTheConnectionCloses() async throws {
    try await withCornerServer { port in
      let bytes = try await send(
        port,
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      let reply = try replyOf(bytes)
      expectError(reply, status: 405)
      #expect(reply.header("Content-Length") == String(reply.body.count))
      #expect(reply.header("Allow") == "GET, HEAD")
      #expect(reply.header("Connection")?.lowercased() == "close")
    }
  }

  /// A CONNECT pipelined behind a request in progress: that request is answered first, then the
  /// 405, then the close.
  @Test(.timeLimit(.minutes(5)))
  func connectAfterAPipelinedRequestIsAnsweredInOrder() async throws {
    try await withCornerServer { port in
      let bytes = try await send(
        port,
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nCONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
      let text = String(decoding: bytes, as: UTF8.self)
      let first = try replyOf(bytes)
      #expect(first.status == 200, "\(text)")
      let secondStart = try #require(text.range(of: "HTTP/1.1 405"), "no 405 after the 200: \(text)")
      let second = try replyOf(Array(text[secondStart.lowerBound...].utf8))
      expectError(second, status: 405)
      #expect(second.header("Connection")?.lowercased() == "close")
    }
  }

  /// Methods: TRACE and PATCH on a served path are the router's JSON 405; a method token NIO's
  /// parser does not know (it was a 400 "not valid HTTP") is a JSON 405 too, and closes.
  @Test(.timeLimit(.minutes(5)))
  func otherMethodsGetAJSON405WithALength() async throws {
    try await withCornerServer { port in
      for method in ["TRACE", "PATCH", "DELETE", "FOO", "PATCHX"] {
        let reply = try replyOf(
          try await send(port, "\(method) /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        expectError(reply, status: 405)
        #expect(reply.header("Content-Length") == String(reply.body.count), "\(method)")
        #expect(reply.header("Allow") == "GET, HEAD", "\(method)")
      }
    }
  }

  /// `Transfer-Encoding: xchunked` was accepted with a 200; any coding but `chunked` alone is a
  /// JSON 501 and the connection closes (nothing after it could be framed).
  @Test(.timeLimit(.minutes(5)))
  func unknownTransferEncodingIsA501AndCloses() async throws {
    try await withCornerServer { port in
      for coding in ["xchunked", "gzip, chunked"] {
        let bytes = try await send(
          port,
          "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding)\r\n\r\n0\r\n\r\n"
            + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let reply = try replyOf(bytes)
        expectError(reply, status: 501)
        #expect(reply.header("Connection")?.lowercased() == "close", "\(coding)")
        #expect(
          String(decoding: bytes, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").count == 2,
          "one answer only: \(coding)")
      }
      // `chunked` itself still works.
      let chunked = try replyOf(
        try await send(
          port, "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n"))
      #expect(chunked.status == 200)
    }
  }

  /// A request asking for an upgrade (curl's `--http2` over http) is answered, with
  /// `Connection: close`, and the connection closes: NIO's parser reads nothing after it, so a
  /// request pipelined behind it used to wait for the idle timeout.
  @Test(.timeLimit(.minutes(5)))
  func upgradeRequestIsAnsweredThenClosed() async throws {
    try await withCornerServer { port in
      let bytes = try await send(
        port,
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
          + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
      let reply = try replyOf(bytes)
      #expect(reply.status == 200)
      #expect(reply.header("Connection")?.lowercased() == "close")
    }
  }

  // MARK: Drain

  /// A connection the server's drain notice does not reach (accepted as the drain began, its
  /// handlers not yet in place when the server told its connections) still learns of the
  /// drain from its own task: it is closed, and any answer it gives says `Connection: close`.
  /// Here no server tells it at all: the connection is served inside a service after graceful
  /// shutdown has begun. It used to answer with keep-alive and stay open until the idle
  /// timeout (30 s).
  @Test(.timeLimit(.minutes(5)))
  func connectionServedAfterTheDrainBeganLearnsOfIt() async throws {
    let channel = GuardedHTTP1Channel(
      responder: { _, writer, _ in
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentLength] = "2"
        try await writer.write(response: head, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
      }, configuration: testConfiguration(), connections: ConnectionCounter())
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
      .bind(host: "127.0.0.1", port: 0) { child in channel.setup(channel: child, logger: quietLogger) }
    let port = try #require(server.channel.localAddress?.port)
    let reply = Task {
      try await onOwnThread { () -> [UInt8] in
        let socket = try TestSocket(port: port)
        try? socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        return try socket.readToEnd(timeout: 10)
      }
    }
    let service = LateConnection {
      try await server.executeThenClose { inbound in
        for try await child in inbound {
          await channel.handle(value: child, logger: quietLogger)
          break
        }
      }
    }
    let group = ServiceGroup(configuration: .init(services: [service], logger: quietLogger))
    let running = Task { try await group.run() }
    await group.triggerGracefulShutdown()
    // The connection closes (before or after answering): no wait for the idle timeout.
    let bytes = try await reply.value
    if !bytes.isEmpty {
      let answer = try replyOf(bytes)
      #expect(answer.status == 200)
      #expect(answer.header("Connection")?.lowercased() == "close", "\(answer)")
    }
    try await running.value
  }
}

/// A service that, once graceful shutdown has begun, runs `body` (in the shutdown's context).
private struct LateConnection: Service {
  let body: @Sendable () async throws -> Void
  func run() async throws {
    try? await gracefulShutdown()
    try await body()
  }
}

/// A live server with the real renderer and the idle timeout far beyond the tests' reads (30 s),
/// so a connection left hanging shows as a read that never ends.
private func withCornerServer(_ body: @Sendable (Int) async throws -> Void) async throws {
  try await LiveServer.with(renderer: try realRenderer(), configuration: testConfiguration()) { port, _ in
    try await body(port)
  }
}

/// Sends `request` on a new connection and reads until the server closes it (at most 10 s, a
/// third of the idle timeout: a connection left open fails the read).
private func send(_ port: Int, _ request: String) async throws -> [UInt8] {
  try await onOwnThread {
    let socket = try TestSocket(port: port)
    try? socket.send(request)
    return try socket.readToEnd(timeout: 10)
  }
}
