import Foundation
import Logging
import NIOCore
import NIOHTTP1

// Every phase of a connection has a limit (``ConnectionDeadlines``), kept by two channel handlers:
// a `SocketMeter` next to the socket (raw bytes in, bytes the socket accepted out) and a
// `ConnectionGuard` just after NIO's HTTP/1 codec (request and response parts), which feeds the
// deadlines' state machine with its event loop's time and closes the connection when it says.
// Both run on the channel's event loop only.
//
// A connection that has to be closed after a response (HTTP/1.0 without keep-alive,
// `Connection: close`, SIGTERM) is closed once the last byte of that response is in the socket:
// output first, then input after the peer closes (or after a short linger), so the peer reads
// the whole response instead of a reset.

/// Keeps the limits of one HTTP/1 connection (see the top of this file), answers what NIO's
/// parser refuses with the JSON errors of the API, and writes the request log line once a
/// response has reached the socket, with the bytes actually written.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias InboundOut = HTTPServerRequestPart
  typealias OutboundIn = HTTPServerResponsePart
  typealias OutboundOut = HTTPServerResponsePart

  /// A request whose response has not reached the socket yet.
  private struct Exchange {
    let method: String
    let path: String
    var query = ""
    var userAgent = ""
    let received: NIODeadline
    /// The request's ID (``RequestIdentity``): the client's when sane, else made here.
    var requestID = RequestIdentity.makeRequestID()
    /// The trace ID of the client's `traceparent`, when it was valid.
    var traceID: String?
    var record: RequestRecord?
    var status = 0
    var announcedBytes: Int?
    /// Where the response's body starts and ends in the meter's byte count.
    var bodyStart = 0
    var bodyEnd = Int.max
  }

  let limits: ConnectionLimits
  let logger: Logger
  let meter: SocketMeter
  private var context: ChannelHandlerContext?

  /// Requests whose head has arrived and whose response has not reached the socket, oldest first.
  private var exchanges: [Exchange] = []
  /// Index in `exchanges` of the one whose response is being written, if any.
  private var responding: Int?
  /// Records from the router, for responses not started yet (in request order).
  private var records: [RequestRecord] = []
  /// Set once the handler is in a pipeline, at the event loop's time.
  private var deadlines: ConnectionDeadlines<LoopInstant>?
  /// Whether the request line of the head being received has ended (for 414 against 431).
  private var requestLineEnded = false
  private var requestLineStarted = false
  private var requestLineBytes = 0
  private var closeAfterResponse = false
  /// The connection's own answer to the last request, once the responses before it are written.
  private var pendingRefusal: Refusal?
  private var inputClosed = false
  private var closed = false
  private var timer: Scheduled<Void>?
  private var timerDeadline: NIODeadline?
  /// The peer's address, for the log (`-` when unknown).
  private var clientAddress = "-"

  init(limits: ConnectionLimits, meter: SocketMeter, logger: Logger) {
    self.limits = limits
    self.meter = meter
    self.logger = logger
  }

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
    if let address = context.channel.remoteAddress?.ipAddress { clientAddress = address }
    deadlines = ConnectionDeadlines(limits: limits, now: now(context))
    reschedule()
  }

  private func now(_ context: ChannelHandlerContext) -> LoopInstant { LoopInstant(context.eventLoop.now) }

  func handlerRemoved(context: ChannelHandlerContext) {
    timer?.cancel()
    timer = nil
    self.context = nil
  }

  func channelInactive(context: ChannelHandlerContext) {
    closed = true
    timer?.cancel()
    timer = nil
    context.fireChannelInactive()
  }

  // MARK: Requests

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !meter.discardsInput else { return }
    var part = unwrapInboundIn(data)
    if case .head(var head) = part {
      if closeAfterResponse && !exchanges.isEmpty {
        // This connection closes after the response in progress: a request pipelined behind
        // it is not taken (the peer was told `Connection: close`), nor anything after it.
        meter.discardsInput = true
        return
      }
      requestLineEnded = false
      requestLineStarted = false
      requestLineBytes = 0
      deadlines?.requestStarted(at: now(context))
      if !head.isKeepAlive || deadlines?.drainStartedAt != nil || Self.endsParsing(head) { closeAfterResponse = true }
      var exchange = Exchange(
        method: String(head.method.rawValue.prefix(32)), path: String(head.uri.prefix { $0 != "?" }.prefix(1024)),
        received: context.eventLoop.now)
      if let mark = head.uri.firstIndex(of: "?") {
        // Bounded: a log line never carries more than 1 KiB of query.
        exchange.query = String(head.uri[head.uri.index(after: mark)...].prefix(1024))
      }
      exchange.userAgent = String((head.headers.first(name: "User-Agent") ?? "").prefix(256))
      // The ID logged here is the one the router sees (and echoes): a missing or insane one is
      // replaced in the head it is handed.
      let sentIDs = head.headers[RequestIdentity.requestIDHeader]
      exchange.requestID = RequestIdentity.requestID(for: sentIDs.count == 1 ? sentIDs[0] : nil)
      if sentIDs != [exchange.requestID] {
        head.headers.replaceOrAdd(name: RequestIdentity.requestIDHeader, value: exchange.requestID)
        part = .head(head)
      }
      let traceParents = head.headers[RequestIdentity.traceParentHeader]
      exchange.traceID = RequestIdentity.traceContext(traceParents.count == 1 ? traceParents[0] : nil)
        .map(\.traceID.description)
      exchanges.append(exchange)
      if let refusal = Self.refusal(of: head) {
        // Answered here, never handed to the router; nothing after it on this connection is read.
        meter.discardsInput = true
        closeAfterResponse = true
        deadlines?.requestEnded()
        if exchanges.count == 1 {
          answer(context: context, refusal)
        } else {
          pendingRefusal = refusal
        }
        reschedule()
        return
      }
    } else if case .end = part {
      deadlines?.requestEnded()
    }
    reschedule()
    context.fireChannelRead(wrapInboundOut(part))
  }

  /// Raw bytes from the peer, before the HTTP decoder sees them.
  func bytesArrived(_ buffer: ByteBuffer) {
    guard let context, var deadlines, !deadlines.isReadingRequest else { return }
    deadlines.bytesArrived(at: now(context))
    self.deadlines = deadlines
    reschedule()
    // Blank lines before a request line are allowed (RFC 9112 §2.2); the line ends at its LF.
    // Only a line that ends within the head limit counts: past it, the parser has stopped on
    // the line itself.
    guard !requestLineEnded, requestLineBytes <= HTTPLimits.maximumHeadBytes else { return }
    for byte in buffer.readableBytesView {
      requestLineBytes += 1
      if requestLineBytes > HTTPLimits.maximumHeadBytes { return }
      if byte == UInt8(ascii: "\n") {
        if requestLineStarted {
          requestLineEnded = true
          return
        }
      } else if byte != UInt8(ascii: "\r") {
        requestLineStarted = true
      }
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    switch event {
    case is ChannelShouldQuiesceEvent:
      // Sent by the server and by the connection's task (``GuardedHTTP1Channel``), which also
      // reaches a connection accepted as the drain began: the first one counts.
      guard deadlines?.drainStarted(at: now(context)) == true else { return }
      closeAfterResponse = true
      if exchanges.isEmpty {
        context.close(promise: nil)
      } else {
        reschedule()
      }
    case ChannelEvent.inputClosed:
      inputClosed = true
      if deadlines?.lingerUntil != nil || exchanges.isEmpty {
        context.close(promise: nil)
        return
      }
      context.fireUserInboundEventTriggered(event)
    default:
      context.fireUserInboundEventTriggered(event)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if let error = error as? HTTPParserError {
      // A head cut by the end of input (the peer left, or the server closed the connection at a
      // timeout) has nobody to answer.
      if closed || error == .invalidEOFState || !context.channel.isActive {
        context.close(promise: nil)
        return
      }
      refuseUnparsable(context: context, error)
    } else if error is ByteToMessageDecoderError {
      // Bytes after a parse error: the answer to it is already on its way.
    } else {
      context.fireErrorCaught(error)
    }
  }

  /// A head NIO's parser refused: 414 when the request line alone overflowed the head limit,
  /// 431 when the header fields did, 405 for a method it does not know, 400 for anything else;
  /// then the connection closes.
  private func refuseUnparsable(context: ChannelHandlerContext, _ error: HTTPParserError) {
    meter.discardsInput = true
    closeAfterResponse = true
    // A response already under way cannot be interrupted by another one: close after it.
    guard exchanges.isEmpty else {
      deadlines?.requestEnded()
      return
    }
    deadlines?.requestRefused()
    let refusal: Refusal
    if error == .headerOverflow && !requestLineEnded {
      refusal = Refusal(.uriTooLong, "the request URI is longer than \(HTTPLimits.maximumURILength) bytes")
    } else if error == .headerOverflow {
      refusal = Refusal(
        .requestHeaderFieldsTooLarge,
        "the request header fields are larger than \(HTTPLimits.maximumHeadBytes) bytes"
          + " or more than \(HTTPLimits.maximumHeaderFields)")
    } else if error == .invalidMethod {
      refusal = .methodNotAllowed
    } else {
      refusal = Refusal(.badRequest, "the request is not valid HTTP/1.1")
    }
    exchanges.append(Exchange(method: "-", path: "-", received: context.eventLoop.now))
    answer(context: context, refusal)
  }

  /// An answer the connection gives itself, for a request the router never sees (or, from
  /// ``ConnectionRefusal``, for a connection past the cap).
  struct Refusal: Equatable {
    let status: HTTPResponseStatus
    let message: String
    var allow: String?
    var retryAfterSeconds: Int?
    /// The ID of the request refused (``RequestIdentity``), echoed in `X-Request-Id`.
    var requestID: String?

    init(_ status: HTTPResponseStatus, _ message: String, allow: String? = nil, retryAfterSeconds: Int? = nil) {
      self.status = status
      self.message = message
      self.allow = allow
      self.retryAfterSeconds = retryAfterSeconds
    }

    /// The whole response, the JSON error of the API (`{"error": {"message": ...}}`, as
    /// ``ServiceError`` writes it) with its length and `Connection: close`; and where its body
    /// starts.
    var response: (bytes: ByteBuffer, bodyStart: Int) {
      let body = (try? ServiceJSON.encode(ErrorBody(error: .init(message: message, parameter: nil)))) ?? Data()
      var head =
        "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: application/json; charset=utf-8\r\n"
        + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\n"
      if let allow { head += "Allow: \(allow)\r\n" }
      if let retryAfterSeconds { head += "Retry-After: \(retryAfterSeconds)\r\n" }
      if let requestID { head += "\(RequestIdentity.requestIDHeader): \(requestID)\r\n" }
      var bytes = ByteBuffer(string: head + "Connection: close\r\n\r\n")
      let bodyStart = bytes.readableBytes
      bytes.writeBytes(body)
      return (bytes, bodyStart)
    }

    static let methodNotAllowed = Refusal(
      .methodNotAllowed, "only GET and HEAD are allowed: this server is not a proxy", allow: "GET, HEAD")
  }

  /// The refusal a request head gets from the connection itself, if any: `CONNECT` (NIO's parser
  /// reads nothing after it, so it cannot reach the router and leave the connection usable) is a
  /// 405; a transfer coding other than `chunked` alone is a 501, since the body's length could
  /// not be known (RFC 9112 §6.1).
  static func refusal(of head: HTTPRequestHead) -> Refusal? {
    if head.method == .CONNECT { return .methodNotAllowed }
    let codings = head.headers["Transfer-Encoding"].flatMap { $0.split(separator: ",") }
      .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    if !codings.isEmpty && codings != ["chunked"] {
      let named = codings.joined(separator: ", ").prefix(64).filter { $0.isASCII && !$0.isNewline }
      return Refusal(.notImplemented, "Transfer-Encoding '\(named)' is not supported: only chunked is")
    }
    return nil
  }

  /// Whether NIO's parser stops reading after this request (`CONNECT`, or an `Upgrade` asked
  /// for with `Connection: upgrade`): its response must then close the connection, or a
  /// request after it would wait for an answer until the idle timeout.
  static func endsParsing(_ head: HTTPRequestHead) -> Bool {
    if head.method == .CONNECT { return true }
    guard head.headers.contains(name: "Upgrade") else { return false }
    return head.headers["Connection"].contains { value in
      value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "upgrade" }
    }
  }

  /// Writes `refusal` as the JSON error of the API, with `Connection: close`, straight to the
  /// socket: NIO's response encoder would drop the body and the length of any answer to a
  /// `CONNECT` (right for a 2xx, which opens a tunnel; wrong for a refusal).
  private func answer(context: ChannelHandlerContext, _ refusal: Refusal) {
    let index = responding.map { $0 + 1 } ?? 0
    guard index < exchanges.count else { return }
    var refusal = refusal
    refusal.requestID = exchanges[index].requestID
    let (bytes, bodyStart) = refusal.response
    responding = index
    exchanges[index].status = Int(refusal.status.code)
    exchanges[index].announcedBytes = bytes.readableBytes - bodyStart
    exchanges[index].bodyStart = meter.queuedBytes + bodyStart
    exchanges[index].bodyEnd = meter.queuedBytes + bytes.readableBytes
    let finished = context.eventLoop.makePromise(of: Void.self)
    finished.futureResult.assumeIsolated().whenComplete { result in
      self.responseFinished(written: result)
    }
    // The write may complete at once, and the exchange be gone after it.
    meter.writeDirectly(bytes, promise: finished)
  }

  // MARK: Responses

  /// The router's record for the next response not started yet. Sent from the request's task
  /// before its responder runs, so records arrive in the order of the responses.
  func expect(_ record: RequestRecord) { records.append(record) }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    switch unwrapOutboundIn(data) {
    case .head(var head):
      if !(100..<200).contains(head.status.code) {
        if closeAfterResponse { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        let index = responding.map { $0 + 1 } ?? 0
        if index < exchanges.count {
          responding = index
          exchanges[index].status = Int(head.status.code)
          exchanges[index].announcedBytes = head.headers.first(name: "Content-Length").flatMap { Int($0) }
          head.headers.replaceOrAdd(name: RequestIdentity.requestIDHeader, value: exchanges[index].requestID)
          if !records.isEmpty { exchanges[index].record = records.removeFirst() }
        }
      }
      context.write(wrapOutboundOut(.head(head)), promise: promise)
      if let responding { exchanges[responding].bodyStart = meter.queuedBytes }
    case .body:
      context.write(data, promise: promise)
    case .end:
      let finished = context.eventLoop.makePromise(of: Void.self)
      finished.futureResult.assumeIsolated().whenComplete { result in
        self.responseFinished(written: result)
      }
      if let promise { finished.futureResult.cascade(to: promise) }
      context.write(data, promise: finished)
      if let responding { exchanges[responding].bodyEnd = meter.queuedBytes }
    }
  }

  /// The oldest response has reached the socket (or failed to).
  private func responseFinished(written result: Result<Void, any Error>) {
    guard !exchanges.isEmpty else { return }
    let exchange = exchanges.removeFirst()
    responding = responding.flatMap { $0 > 0 ? $0 - 1 : nil }
    let complete: Bool
    if case .success = result { complete = true } else { complete = false }
    log(exchange, complete: complete)
    guard let context else { return }
    deadlines?.responseFinished(at: now(context))
    guard complete, !closed else { return }
    if exchanges.count == 1, let refusal = pendingRefusal {
      // The responses before it are written: now the connection's own answer.
      pendingRefusal = nil
      answer(context: context, refusal)
    }
    if exchanges.isEmpty && (closeAfterResponse || inputClosed) { beginClosing(context: context) }
    reschedule()
  }

  private func log(_ exchange: Exchange, complete: Bool) {
    let bodyBytes = max(0, min(meter.writtenBytes, exchange.bodyEnd) - exchange.bodyStart)
    let elapsed = (context?.eventLoop.now ?? exchange.received) - exchange.received
    var metadata: Logger.Metadata = [
      "method": .string(exchange.method), "path": .string(exchange.path),
      "route": .string(exchange.record?.route ?? "unmatched"), "status": .stringConvertible(exchange.status),
      "ms": .stringConvertible((Double(elapsed.nanoseconds) / 1e5).rounded() / 10),
      "bytes": .stringConvertible(bodyBytes), "query": .string(exchange.query),
      "client": .string(clientAddress), "user_agent": .string(exchange.userAgent),
      "request_id": .string(exchange.requestID),
    ]
    if let traceID = exchange.traceID { metadata["trace_id"] = .string(traceID) }
    if complete {
      logger.info("request", metadata: metadata)
    } else {
      // Cut short: the bytes are what the socket took, not what the response announced.
      metadata["complete"] = .stringConvertible(false)
      if let announced = exchange.announcedBytes { metadata["of"] = .stringConvertible(announced) }
      logger.warning("request", metadata: metadata)
    }
  }

  /// Logs the requests whose response has not started, as answered with `status`, and forgets
  /// them: the connection is closing at a limit, so any answer still to come has nowhere to go
  /// (and is not logged again: its write finds no exchange).
  private func logUnanswered(status: Int) {
    let firstUnanswered = responding.map { $0 + 1 } ?? 0
    guard firstUnanswered < exchanges.count else { return }
    for var exchange in exchanges[firstUnanswered...] {
      exchange.status = status
      if exchange.record == nil, !records.isEmpty { exchange.record = records.removeFirst() }
      exchange.bodyStart = meter.writtenBytes
      log(exchange, complete: true)
    }
    exchanges.removeSubrange(firstUnanswered...)
  }

  /// Closes output now that the last response is in the socket, then input once the peer has
  /// closed its side or the linger is over.
  private func beginClosing(context: ChannelHandlerContext) {
    guard deadlines?.lingerUntil == nil else { return }
    meter.discardsInput = true
    if inputClosed {
      context.close(promise: nil)
      return
    }
    deadlines?.lingerStarted(at: now(context))
    context.close(mode: .output, promise: nil)
    // Reads go on (and are dropped) until the peer's end of file.
    context.read()
  }

  // MARK: Deadlines

  /// The meter handed a write to the socket: the write timeout may now apply.
  func writeStarted() {
    guard let context else { return }
    deadlines?.writeStarted(at: now(context))
    reschedule()
  }

  /// The socket accepted (or failed) a write. The timer is not moved: when it fires, the
  /// deadlines say whether a limit has really run out.
  func writeFinished(accepted: Bool) {
    guard let context else { return }
    deadlines?.writeFinished(at: now(context), accepted: accepted)
  }

  /// Schedules the timer for the next deadline, unless it is already set for one no later.
  private func reschedule() {
    guard let context, !closed, let (deadline, _) = deadlines?.nextDeadline else { return }
    if timer != nil, let timerDeadline, timerDeadline <= deadline.deadline { return }
    timer?.cancel()
    timerDeadline = deadline.deadline
    timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline.deadline) { self.timerFired() }
  }

  private func timerFired() {
    timer = nil
    timerDeadline = nil
    guard let context, !closed, let deadlines else { return }
    guard let expiry = deadlines.expiry(at: now(context)) else {
      reschedule()
      return
    }
    switch expiry {
    case .idle, .linger:
      logger.trace("connection closed", metadata: ["reason": .string(expiry.rawValue)])
    case .header, .body:
      logger.info("connection closed", metadata: ["reason": .string(expiry.rawValue)])
      // A request whose body was still arriving has its line now, as a 408.
      if expiry == .body { logUnanswered(status: 408) }
    case .write:
      let seconds = Double(limits.write.components.seconds) + Double(limits.write.components.attoseconds) / 1e18
      logger.warning(
        "connection closed",
        metadata: [
          "reason": .string(expiry.rawValue),
          "detail": .string("the client took no byte for \(String(format: "%g", seconds)) s"),
        ])
    case .drain:
      logger.warning(
        "connection closed",
        metadata: [
          "reason": .string(expiry.rawValue), "responses": .stringConvertible(exchanges.count),
          "unsent": .stringConvertible(meter.queuedBytes - meter.writtenBytes),
        ])
    }
    closed = true
    context.close(promise: nil)
  }
}
