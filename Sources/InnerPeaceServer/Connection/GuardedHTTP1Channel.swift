import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import ServiceLifecycle

/// Hummingbird's HTTP/1 child channel with every phase of a connection bounded.
///
/// The pipeline is Hummingbird's `HTTP1Channel` one (NIO's HTTP/1 codec, then the conversion to
/// HTTP types, then an async channel that Hummingbird's `handleHTTP` serves), with two handlers
/// of ours around NIO's codec in place of Hummingbird's `HTTPConnectionStateHandler`, whose idle
/// timer counts from the moment a response is handed over, not from its last byte on the wire
/// (``ConnectionGuard``, ``ConnectionDeadlines``), and ``RequestTargetHandler`` before the
/// conversion. Past `maxConnections`, a connection gets a 503 and nothing else;
/// so does one past `connectionsPerClient` from its client address (closed at once past a few).
/// Each request runs with its client (``ClientAddress/current``) for the per-client render share.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
  typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

  let responder: HTTPChannelHandler.Responder
  let configuration: ServerConfiguration
  let limits: ConnectionLimits
  let connections: ConnectionCounter

  init(
    responder: @escaping HTTPChannelHandler.Responder, configuration: ServerConfiguration,
    connections: ConnectionCounter
  ) {
    // The request's task tells the connection which record the router fills in, before the
    // response is written, so the log line written at the last byte has the route.
    let trustsForwardedHeaders = configuration.trustsForwardedHeaders
    self.responder = { request, writer, channel in
      let client = ClientAddress.of(
        peer: channel.remoteAddress?.ipAddress ?? "-", headers: request.headers,
        trustsForwardedHeaders: trustsForwardedHeaders)
      let record = RequestRecord()
      channel.eventLoop.execute {
        try? channel.pipeline.syncOperations.handler(type: ConnectionGuard.self).expect(record)
      }
      var pending = Optional(writer)
      try await RequestRecord.$current.withValue(record) {
        try await ClientAddress.$current.withValue(client) {
          guard let writer = pending.take() else { return }
          try await responder(request, writer, channel)
        }
      }
    }
    self.configuration = configuration
    limits = ConnectionLimits(configuration)
    self.connections = connections
  }

  func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
    channel.eventLoop.makeCompletedFuture {
      let pipeline = channel.pipeline.syncOperations
      // A client past its share gets its 503 like any refusal (output closed first, so the peer
      // reads it), but only a few such refusals of one client linger: past them it is closed
      // at once, so refusals never hold many slots of the global cap.
      let peer = channel.remoteAddress?.ipAddress ?? "-"
      guard connections.perClient.take(peer, limit: configuration.connectionsPerClient) else {
        let lingers = connections.lingeringRefusals.take(peer, limit: HTTPLimits.lingeringRefusalsPerClient)
        if lingers { channel.closeFuture.whenComplete { _ in connections.lingeringRefusals.release(peer) } }
        try pipeline.addHandler(
          ConnectionRefusal(
            retryAfterSeconds: configuration.retryAfterSeconds, lingerTimeout: lingers ? limits.linger : nil,
            message: "this client has too many open connections; close some and try again"))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init())
      }
      channel.closeFuture.whenComplete { _ in connections.perClient.release(peer) }
      // The counter already includes this connection (Hummingbird counts at accept).
      if connections.open.load(ordering: .relaxed) > configuration.maxConnections {
        try pipeline.addHandler(
          ConnectionRefusal(
            retryAfterSeconds: configuration.retryAfterSeconds, lingerTimeout: limits.linger,
            message: "the server has too many open connections; try again shortly"))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init())
      }
      try Self.addHTTPHandlers(to: pipeline, limits: limits, logger: logger)
      try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
      return try NIOAsyncChannel(
        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }
  }

  /// The HTTP/1 handlers of a connection under its limits, up to the conversion to HTTP types:
  /// the meter, NIO's codec with the head limits, the guard, the request target's check.
  static func addHTTPHandlers(
    to pipeline: ChannelPipeline.SynchronousOperations, limits: ConnectionLimits, logger: Logger
  ) throws {
    var decoderLimits = NIOHTTPDecoderLimitConfiguration()
    decoderLimits.maxHeaderFieldSize = HTTPLimits.maximumHeadBytes
    decoderLimits.maxHeaderListSize = HTTPLimits.maximumHeadBytes
    decoderLimits.maxHeaderFieldCount = HTTPLimits.maximumHeaderFields
    let meter = SocketMeter(sliceBytes: limits.writeSliceBytes)
    try pipeline.addHandler(meter)
    try pipeline.configureHTTPServerPipeline(
      withPipeliningAssistance: false,  // the async channel serves one request at a time
      withErrorHandling: false,  // parse errors are answered by the guard
      withOutboundHeaderValidation: false,  // HTTP types validate headers already
      withEncoderConfiguration: .init(),
      withDecoderLimitConfiguration: decoderLimits
    )
    let connection = ConnectionGuard(limits: limits, meter: meter, logger: logger)
    meter.connection = connection
    try pipeline.addHandler(connection)
    try pipeline.addHandler(RequestTargetHandler())
  }

  func handle(value asyncChannel: Value, logger: Logger) async {
    // The server tells its open connections of a graceful shutdown (ChannelShouldQuiesceEvent),
    // but a connection accepted as the drain began gets that event before its handlers are in
    // place, and would go on answering without `Connection: close`. Its task hears the
    // shutdown too (at once if it has begun), and tells the connection again.
    let channel = asyncChannel.channel
    await withGracefulShutdownHandler {
      await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    } onGracefulShutdown: {
      channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }
  }
}
