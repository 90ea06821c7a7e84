import Foundation
import NIOCore

/// The answer past ``ServerConfiguration/maxConnections``: a 503 written as soon as the
/// connection opens, then closed like any other (output first, input after the peer's end or a
/// short linger), without parsing anything. Past a client's share
/// (``ServerConfiguration/maxConnectionsPerClient``) and ``HTTPLimits/lingeringRefusalsPerClient``
/// more, there is no linger: the connection is closed as soon as the 503 is in the socket, so
/// that a client opening connections in a loop cannot hold slots of the global cap.
final class ConnectionRefusal: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  let retryAfterSeconds: Int
  /// `nil`: close once the answer is written.
  let lingerTimeout: Duration?
  let message: String
  private var answered = false

  init(retryAfterSeconds: Int, lingerTimeout: Duration?, message: String) {
    self.retryAfterSeconds = retryAfterSeconds
    self.lingerTimeout = lingerTimeout
    self.message = message
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { answer(context: context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    answer(context: context)
    context.fireChannelActive()
  }

  private func answer(context: ChannelHandlerContext) {
    guard !answered else { return }
    answered = true
    let body = jsonErrorBody(message)
    var bytes = ByteBuffer()
    bytes.writeString(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
        + "Content-Length: \(body.count)\r\nRetry-After: \(retryAfterSeconds)\r\nCache-Control: no-store\r\n"
        + "Connection: close\r\n\r\n")
    bytes.writeBytes(body)
    guard let lingerTimeout else {
      context.writeAndFlush(NIOAny(IOData.byteBuffer(bytes))).assumeIsolated().whenComplete { _ in
        context.close(promise: nil)
      }
      return
    }
    context.writeAndFlush(NIOAny(IOData.byteBuffer(bytes)), promise: nil)
    context.close(mode: .output, promise: nil)
    context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(lingerTimeout)) { context.close(promise: nil) }
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if case ChannelEvent.inputClosed = event { context.close(promise: nil) }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// `{"error": {"message": ...}}`, as ``ServiceError`` writes it.
func jsonErrorBody(_ message: String) -> [UInt8] {
  Array((try? ServiceJSON.encode(ErrorBody(error: .init(message: message, parameter: nil)))) ?? Data())
}
