import NIOCore

/// Raw bytes at the socket: tells the guard when bytes arrive (a request head may be starting),
/// and hands responses to the socket in slices, counting the bytes the socket accepted and
/// telling the guard of each write's start and end (the write timeout is about progress).
final class SocketMeter: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer
  typealias OutboundIn = IOData
  typealias OutboundOut = IOData

  let sliceBytes: Int
  /// The guard to tell; set once the pipeline is built.
  weak var connection: ConnectionGuard?
  /// Bytes handed to the socket so far, in order.
  private(set) var queuedBytes = 0
  /// Bytes the socket has accepted so far.
  private(set) var writtenBytes = 0
  /// Set when the server is closing: what the peer still sends is read and dropped.
  var discardsInput = false

  /// Set while the handler is in a pipeline.
  private var context: ChannelHandlerContext?

  init(sliceBytes: Int) { self.sliceBytes = sliceBytes }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }
  func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

  /// Writes bytes that the HTTP encoder must not touch (an answer the connection gives itself),
  /// measured like any response, and flushes.
  func writeDirectly(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>) {
    guard let context else {
      promise.fail(ChannelError.ioOnClosedChannel)
      return
    }
    measuredWrite(context: context, .byteBuffer(buffer), count: buffer.readableBytes, promise: promise)
    context.flush()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if discardsInput { return }
    connection?.bytesArrived(unwrapInboundIn(data))
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    switch unwrapOutboundIn(data) {
    case .byteBuffer(var buffer):
      // Slices share the buffer's storage: nothing is copied.
      while buffer.readableBytes > sliceBytes, let slice = buffer.readSlice(length: sliceBytes) {
        measuredWrite(context: context, .byteBuffer(slice), count: slice.readableBytes, promise: nil)
      }
      measuredWrite(context: context, .byteBuffer(buffer), count: buffer.readableBytes, promise: promise)
    case .fileRegion(let region):
      measuredWrite(context: context, .fileRegion(region), count: region.readableBytes, promise: promise)
    }
  }

  private func measuredWrite(
    context: ChannelHandlerContext, _ data: IOData, count: Int, promise: EventLoopPromise<Void>?
  ) {
    queuedBytes += count
    connection?.writeStarted()
    let measured = context.eventLoop.makePromise(of: Void.self)
    measured.futureResult.assumeIsolated().whenComplete { result in
      let accepted: Bool
      if case .success = result { accepted = true } else { accepted = false }
      if accepted { self.writtenBytes += count }
      self.connection?.writeFinished(accepted: accepted)
    }
    if let promise { measured.futureResult.cascade(to: promise) }
    context.write(wrapOutboundOut(data), promise: measured)
  }
}
