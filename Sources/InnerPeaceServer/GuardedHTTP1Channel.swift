import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Synchronization

/// Hummingbird's HTTP/1 child channel with every phase of a connection bounded.
///
/// The pipeline is Hummingbird's `HTTP1Channel` one (NIO's HTTP/1 codec, then the conversion to
/// HTTP types, then an async channel that Hummingbird's `handleHTTP` serves), with two handlers
/// of ours around NIO's codec in place of Hummingbird's `HTTPConnectionStateHandler`, whose idle
/// timer counts from the moment a response is handed over, not from its last byte on the wire
/// (see ConnectionGuard.swift). Past `maxConnections`, a connection gets a 503 and nothing else.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
  typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

  let responder: HTTPChannelHandler.Responder
  let limits: ConnectionLimits
  let maxConnections: Int
  let retryAfterSeconds: Int
  let connections: ConnectionCounter

  init(
    responder: @escaping HTTPChannelHandler.Responder, configuration: ServerConfiguration,
    connections: ConnectionCounter
  ) {
    // The request's task tells the connection which record the router fills in, before the
    // response is written, so the log line written at the last byte has the route.
    self.responder = { request, writer, channel in
      let record = RequestRecord()
      channel.eventLoop.execute {
        try? channel.pipeline.syncOperations.handler(type: ConnectionGuard.self).expect(record)
      }
      var pending = Optional(writer)
      try await RequestRecord.$current.withValue(record) {
        guard let writer = pending.take() else { return }
        try await responder(request, writer, channel)
      }
    }
    limits = ConnectionLimits(configuration)
    maxConnections = configuration.maxConnections
    retryAfterSeconds = configuration.retryAfterSeconds
    self.connections = connections
  }

  func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
    channel.eventLoop.makeCompletedFuture {
      let pipeline = channel.pipeline.syncOperations
      // The counter already includes this connection (Hummingbird counts at accept).
      if connections.open.load(ordering: .relaxed) > maxConnections {
        try pipeline.addHandler(
          ConnectionRefusal(retryAfterSeconds: retryAfterSeconds, lingerTimeout: limits.lingerTimeout))
        return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init())
      }
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
      try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
      return try NIOAsyncChannel(
        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
    }
  }

  func handle(value asyncChannel: Value, logger: Logger) async {
    await handleHTTP(asyncChannel: asyncChannel, logger: logger)
  }
}

/// What the request log knows of a request before its response goes out: filled in by the
/// router's middleware (through ``RequestRecord/current``), read by the connection once the
/// last byte of the response is in the socket.
final class RequestRecord: Sendable {
  @TaskLocal static var current: RequestRecord?
  private let state = NIOLockedValueBox<String?>(nil)
  /// The route that answered, once the router has matched one.
  var route: String? {
    get { state.withLockedValue { $0 } }
    set { state.withLockedValue { $0 = newValue } }
  }
}

/// Open connections, shared by the accept side (Hummingbird's `AvailableConnectionsDelegate`)
/// and the connection setup.
final class ConnectionCounter: Sendable {
  let open = Atomic<Int>(0)
  init() {}
}

/// Hummingbird's hook on the listening socket: counts connections, and stops accepting (new ones
/// wait in the listen backlog) once even the 503 allowance past the limit is used up.
struct ConnectionCap: AvailableConnectionsDelegate {
  let counter: ConnectionCounter
  let hardLimit: Int
  mutating func connectionOpened() { counter.open.add(1, ordering: .relaxed) }
  mutating func connectionClosed() { counter.open.subtract(1, ordering: .relaxed) }
  func isAcceptingNewConnections() -> Bool { counter.open.load(ordering: .relaxed) < hardLimit }
}
