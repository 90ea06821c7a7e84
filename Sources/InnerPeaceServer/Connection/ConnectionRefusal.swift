import NIOCore

/// The answer past ``ServerConfiguration/maxConnections``: a 503 written as soon as the
/// connection opens, then closed like any other (output first, input after the peer's end or a
/// short linger), without parsing anything. Past a client's share
/// (``ServerConfiguration/maxConnectionsPerClient``) and ``HTTPLimits/lingeringRefusalsPerClient``
/// more, there is no linger: the connection is closed as soon as the 503 is in the socket, so
/// that a client opening connections in a loop cannot hold slots of the global cap.
final class ConnectionRefusal: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  let refusal: ConnectionGuard.Refusal
  /// `nil`: close once the answer is written.
  let lingerTimeout: Duration?
  private var answered = false

  init(retryAfterSeconds: Int, lingerTimeout: Duration?, message: String) {
    refusal = .init(.serviceUnavailable, message, retryAfterSeconds: retryAfterSeconds)
    self.lingerTimeout = lingerTimeout
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
    let bytes = refusal.response.bytes
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
