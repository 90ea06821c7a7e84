package import Instrumentation
package import Logging
package import W3CTraceContext

/// What names a request in the logs, the responses and the worker's lines: its request ID and,
/// when the client sent a valid W3C `traceparent`, its trace.
///
/// - A request ID is taken from `X-Request-Id` when that is a sane token: 1 to 128 characters,
///   each one of `A-Z a-z 0-9 . _ : -` (no space, quote, control character or non-ASCII letter,
///   so it can neither forge a log field nor a header). Otherwise one is made: 16 random bytes
///   as 32 lowercase hex digits. It is echoed in `X-Request-Id` on every response and logged as
///   `request_id`.
/// - A `traceparent` is read when it is valid per W3C Trace Context level 1 for version `00`:
///   `00-<32 hex trace ID>-<16 hex parent ID>-<2 hex flags>`, lowercase hex, neither ID all
///   zeros. Its trace ID is logged as `trace_id`; an invalid one is ignored.
///
/// Both travel in the request's `ServiceContext` (``ServiceContext/requestID``,
/// ``ServiceContext/traceContext``), to the worker through ``RequestIdentityInstrument``.
package enum RequestIdentity {
  /// The request header (and response header) that carries the request ID.
  package static let requestIDHeader = "X-Request-Id"
  /// The W3C Trace Context request header.
  package static let traceParentHeader = "traceparent"
  /// The longest request ID taken from a client.
  package static let maximumRequestIDLength = 128

  /// `value` when it is a sane request ID (see the type's comment), else `nil`.
  package static func acceptedRequestID(_ value: String?) -> String? {
    guard let value else { return nil }
    let bytes = value.utf8
    guard (1...maximumRequestIDLength).contains(bytes.count), bytes.allSatisfy(isRequestIDByte) else { return nil }
    return value
  }

  private static func isRequestIDByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
      UInt8(ascii: "-"):
      true
    default: false
    }
  }

  /// A new request ID: 16 random bytes as 32 lowercase hex digits.
  package static func makeRequestID() -> String {
    var generator = SystemRandomNumberGenerator()
    let high = generator.next() as UInt64
    let low = generator.next() as UInt64
    return hex(high) + hex(low)
  }

  private static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// The request ID for a request whose `X-Request-Id` is `value`: that value when it is sane,
  /// else a new one.
  package static func requestID(for value: String?) -> String {
    acceptedRequestID(value) ?? makeRequestID()
  }

  /// The trace context of a `traceparent` value, when it is valid (see the type's comment).
  package static func traceContext(_ value: String?) -> TraceContext? {
    // A valid version-00 value is exactly 55 bytes: anything longer is refused before parsing.
    guard let value, value.utf8.count == 55 else { return nil }
    return try? TraceContext(traceParentHeaderValue: value)
  }
}

/// The request ID in a `ServiceContext`.
private enum RequestIDKey: ServiceContextKey {
  typealias Value = String
  static var nameOverride: String? { "request_id" }
}

/// The W3C trace context in a `ServiceContext`.
private enum TraceContextKey: ServiceContextKey {
  typealias Value = TraceContext
  static var nameOverride: String? { "trace_context" }
}

extension ServiceContext {
  /// The request's ID (``RequestIdentity``).
  package var requestID: String? {
    get { self[RequestIDKey.self] }
    set { self[RequestIDKey.self] = newValue }
  }

  /// The trace the client's `traceparent` named, if it sent a valid one.
  package var traceContext: TraceContext? {
    get { self[TraceContextKey.self] }
    set { self[TraceContextKey.self] = newValue }
  }

  /// `request_id` and `trace_id`, for the log lines written while this context is current.
  package var logMetadata: Logger.Metadata {
    var metadata: Logger.Metadata = [:]
    if let requestID { metadata["request_id"] = .string(requestID) }
    if let traceContext { metadata["trace_id"] = .string(traceContext.traceID.description) }
    return metadata
  }
}

extension Logger.MetadataProvider {
  /// `request_id` and `trace_id` of the task's current `ServiceContext`, on every line logged in
  /// a request's task (the render pool's lines too).
  package static let requestIdentity = Logger.MetadataProvider { ServiceContext.current?.logMetadata ?? [:] }
}

/// Carries a request's identity across a process boundary through swift-distributed-tracing's
/// `Instrument` interface: `X-Request-Id` and `traceparent` in and out of a carrier (HTTP fields
/// from a client, the worker wire's header). Extraction takes only sane values (``RequestIdentity``)
/// and leaves the context as it was for the rest.
package struct RequestIdentityInstrument: Instrument {
  package init() {}

  package func extract<Carrier, Extract: Extractor>(
    _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
  ) where Extract.Carrier == Carrier {
    if let requestID = RequestIdentity.acceptedRequestID(
      extractor.extract(key: RequestIdentity.requestIDHeader, from: carrier))
    {
      context.requestID = requestID
    }
    if let trace = RequestIdentity.traceContext(
      extractor.extract(key: RequestIdentity.traceParentHeader, from: carrier))
    {
      context.traceContext = trace
    }
  }

  package func inject<Carrier, Inject: Injector>(
    _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
  ) where Inject.Carrier == Carrier {
    if let requestID = context.requestID {
      injector.inject(requestID, forKey: RequestIdentity.requestIDHeader, into: &carrier)
    }
    if let trace = context.traceContext {
      injector.inject(trace.traceParentHeaderValue, forKey: RequestIdentity.traceParentHeader, into: &carrier)
    }
  }
}

/// A `[String: String]` as a carrier (the worker wire's `context`).
package struct DictionaryCarrier: Extractor, Injector {
  package init() {}

  package func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }

  package func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
    carrier[key] = value
  }
}
