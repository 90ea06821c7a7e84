import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import Instrumentation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import InnerPeaceServer

/// Request IDs and W3C trace context: the rule for a client's ID, the `traceparent` check, the
/// context's trip to a worker, and the echo on every response.
@Suite struct RequestIdentityTests {
  static let traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

  // MARK: The request-ID rule

  @Test(arguments: [
    "a", "abc-123", "req_1.2:3", "0f8fad5b-d9cb-469f-a165-70867728950e", String(repeating: "Z", count: 128),
  ])
  func saneIDsAreTaken(value: String) {
    #expect(RequestIdentity.acceptedRequestID(value) == value)
    #expect(RequestIdentity.requestID(for: value) == value)
  }

  @Test(arguments: [
    "", String(repeating: "a", count: 129), String(repeating: "x", count: 10_240), "abc\r\nX-Forged: 1", "a\nb",
    "a\u{0}b", "tab\there", "with space", "caf\u{E9}", "\u{1F33F}", "quote\"", "back\\slash", "a=b", "a,b", "a;b",
    "<script>", "ａｂｃ",
  ])
  func hostileIDsAreReplaced(value: String) {
    #expect(RequestIdentity.acceptedRequestID(value) == nil)
    let made = RequestIdentity.requestID(for: value)
    #expect(made != value)
    #expect(made.count == 32 && made.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(made)")
  }

  @Test func madeIDsDiffer() {
    let made = Set((0..<1000).map { _ in RequestIdentity.makeRequestID() })
    #expect(made.count == 1000)
    #expect(RequestIdentity.requestID(for: nil).count == 32)
  }

  // MARK: traceparent

  @Test func validTraceParentIsRead() throws {
    let trace = try #require(RequestIdentity.traceContext(Self.traceParent))
    #expect(trace.traceID.description == Self.traceID)
    #expect(trace.traceParentHeaderValue == Self.traceParent)
  }

  @Test(arguments: [
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // uppercase hex
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace ID
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent ID
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // forbidden version
    "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // not version 00
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // longer than version 00
    "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",  // misplaced delimiter
    "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // wrong delimiters
    "00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01",  // not hex
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",  // flags not hex
    "", "00", "00-\r\n-x", String(repeating: "0", count: 10_240),
  ])
  func invalidTraceParentIsIgnored(value: String) {
    #expect(RequestIdentity.traceContext(value) == nil)
  }

  // MARK: Carrying the context

  /// The context goes into the worker wire's header and comes out the same; hostile values do not
  /// come out at all.
  @Test func instrumentCarriesTheIdentityThroughTheWireHeader() throws {
    var context = ServiceContext.topLevel
    context.requestID = "req-42"
    context.traceContext = RequestIdentity.traceContext(Self.traceParent)
    var carrier: [String: String] = [:]
    RequestIdentityInstrument().inject(context, into: &carrier, using: DictionaryCarrier())
    #expect(carrier == ["X-Request-Id": "req-42", "traceparent": Self.traceParent])

    let frame = WorkerFrame(.render(CardRequest(seed: 1)), context: carrier)
    let decoded = try WorkerFrame(decoding: frame.encoded())
    var received = ServiceContext.topLevel
    RequestIdentityInstrument().extract(decoded.header.context ?? [:], into: &received, using: DictionaryCarrier())
    #expect(received.requestID == "req-42")
    #expect(received.traceContext?.traceID.description == Self.traceID)
    #expect(received.logMetadata == ["request_id": "req-42", "trace_id": .string(Self.traceID)])

    var hostile = ServiceContext.topLevel
    RequestIdentityInstrument().extract(
      ["X-Request-Id": "a\r\nb", "traceparent": "00-zz"], into: &hostile, using: DictionaryCarrier())
    #expect(hostile.requestID == nil && hostile.traceContext == nil)
  }

  /// A header without `context` (as a build before it wrote) reads as before, and one with it
  /// leaves it out of the JSON when there is none.
  @Test func wireHeaderWithoutContextStillReads() throws {
    let old = Data(#"{"version":\#(WorkerWireHeader.currentVersion),"message":{"ready":{}}}"#.utf8)
    let header = try JSONDecoder().decode(WorkerWireHeader.self, from: old)
    #expect(header.context == nil)
    guard case .ready = header.message else {
      Issue.record("not ready: \(header.message)")
      return
    }
    let written = String(decoding: WorkerFrame.encodedHeader(WorkerWireHeader(.ready)), as: UTF8.self)
    #expect(!written.contains("context"), "\(written)")
  }

  /// Lines logged in a request's task carry its identity through the metadata provider.
  @Test func linesInTheContextCarryTheIdentity() throws {
    let (logger, lines) = LogFormatTests.capture {
      JSONLogHandler(label: "innerpeace", level: .info, metadataProvider: .requestIdentity, write: $0)
    }
    var context = ServiceContext.topLevel
    context.requestID = "req-7"
    context.traceContext = RequestIdentity.traceContext(Self.traceParent)
    ServiceContext.withValue(context) { logger.info("inside") }
    logger.info("outside")
    let objects = try lines.withLockedValue { $0 }.map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    #expect(objects.count == 2)
    #expect(objects[0]["request_id"] as? String == "req-7" && objects[0]["trace_id"] as? String == Self.traceID)
    #expect(objects[1]["request_id"] == nil && objects[1]["trace_id"] == nil)
  }

  // MARK: Through the router

  /// `X-Request-Id` on a card, a 304, a 404, a 400 and a 405: the client's when sane, else a new
  /// one; and the request's log line carries the same ID and the trace ID.
  @Test func everyRouterResponseEchoesTheID() async throws {
    let (logger, lines) = LogFormatTests.capture {
      JSONLogHandler(label: "innerpeace", level: .info, metadataProvider: .requestIdentity, write: $0)
    }
    let service = CardService(renderer: try realRenderer(), configuration: testConfiguration())
    let app = Application(router: buildRouter(service: service), logger: logger)
    do {
      try await app.test(.router) { client in
        let card = try await client.execute(
          uri: "/cards/1.png?w=200&h=200", method: .get,
          headers: [HTTPField.Name("X-Request-Id")!: "client-1", HTTPField.Name("traceparent")!: Self.traceParent])
        #expect(card.status == .ok)
        #expect(card.headers[HTTPField.Name("X-Request-Id")!] == "client-1")
        let etag = try #require(card.headers[.eTag])

        let revalidated = try await client.execute(
          uri: "/cards/1.png?w=200&h=200", method: .get,
          headers: [.ifNoneMatch: etag, HTTPField.Name("X-Request-Id")!: "client-2"])
        #expect(revalidated.status == .notModified)
        #expect(revalidated.headers[HTTPField.Name("X-Request-Id")!] == "client-2")

        for (uri, method, status) in [
          ("/no-such-route", HTTPRequest.Method.get, HTTPResponse.Status.notFound),
          ("/cards/1.png?w=nope", .get, .badRequest), ("/cards/1.png", .post, .methodNotAllowed),
        ] {
          let response = try await client.execute(
            uri: uri, method: method, headers: [HTTPField.Name("X-Request-Id")!: "bad id\r\nX-Forged: 1"])
          #expect(response.status == status, "\(uri)")
          let id = try #require(response.headers[HTTPField.Name("X-Request-Id")!], "\(uri)")
          #expect(RequestIdentity.acceptedRequestID(id) == id && id.count == 32, "\(uri): \(id)")
          #expect(response.headers[HTTPField.Name("X-Forged")!] == nil)
        }
      }
    } catch {
      try? await service.shutdown()
      throw error
    }
    try await service.shutdown()
    let requests = try lines.withLockedValue { $0 }.compactMap {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }.filter { $0["message"] as? String == "request" }
    let first = try #require(requests.first)
    #expect(first["request_id"] as? String == "client-1")
    #expect(first["trace_id"] as? String == Self.traceID)
    #expect(first["status"] as? Int == 200)
    #expect(requests.count == 5)
  }
}
