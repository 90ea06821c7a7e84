import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// Applies ``RequestTarget/normalize(_:)`` to every request head.
final class RequestTargetHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias InboundOut = HTTPServerRequestPart

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard case .head(var head) = unwrapInboundIn(data) else {
      context.fireChannelRead(data)
      return
    }
    RequestTarget.normalize(&head)
    context.fireChannelRead(wrapInboundOut(.head(head)))
  }
}
