import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A real `serve` in each log format, with worker processes: a card with a request ID and a
/// `traceparent`, a 404 whose User-Agent tries to forge fields, a refusal from the connection
/// itself, and a worker that crashes; then SIGTERM. Every line it wrote, the start-up and
/// shutdown lines and the workers' lines included, must read as one JSON object (or one logfmt
/// record), with numbers as numbers.
@Suite(.serialized, .tags(.live, .process, .binary)) struct ServeLogFormatTests {
  static let traceParent = RequestIdentityTests.traceParent
  static let traceID = RequestIdentityTests.traceID
  static let forgingAgent = "x status=500 route=/admin"

  @Test(.timeLimit(.minutes(3)), arguments: ["json", "text"])
  func everyLineIsOneRecord(format: String) async throws {
    let server = try await WorkerServer.start(
      arguments: ["--concurrency", "1", "--log-format", format], environment: WorkerIsolationTests.faults)
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")

    let card = try await onOwnThread {
      try RawHTTPConnection(
        port: port,
        request: "GET /cards/1.png?w=300&h=300 HTTP/1.1\r\nX-Request-Id: live-1\r\ntraceparent: \(Self.traceParent)"
      ).response(timeout: 30)
    }
    #expect(card.status == 200)
    #expect(card.header("X-Request-Id") == "live-1")
    #expect(card.headers.filter { $0.0.lowercased() == "x-request-id" }.count == 1, "\(card.headers)")

    let missing = try await onOwnThread {
      try RawHTTPConnection(
        port: port, request: "GET /nope HTTP/1.1\r\nUser-Agent: \(Self.forgingAgent)\r\nX-Request-Id: bad id!"
      ).response(timeout: 30)
    }
    #expect(missing.status == 404)
    let madeID = try #require(missing.header("X-Request-Id"))
    #expect(madeID.count == 32 && madeID.allSatisfy(\.isHexDigit), "\(madeID)")

    // Refused by the connection before the router: the ID is echoed there too.
    let refused = try await onOwnThread {
      try RawHTTPConnection(
        port: port, request: "GET /cards/1.png HTTP/1.1\r\nTransfer-Encoding: gzip\r\nX-Request-Id: refused-1"
      ).response(timeout: 30)
    }
    #expect(refused.status == 501)
    #expect(refused.header("X-Request-Id") == "refused-1")

    let crashed = try await onOwnThread {
      try RawHTTPConnection(
        port: port, request: "GET /card.png?text=\(WorkerIsolationTests.abort) HTTP/1.1\r\nX-Request-Id: crash-1"
      ).response(timeout: 30)
    }
    #expect(crashed.status == 500)
    #expect(crashed.header("X-Request-Id") == "crash-1")
    _ = try await server.waitForWorkerStarts(2)

    server.signal(SIGTERM)
    #expect(try await server.waitForExit(timeout: .seconds(60)) == 0, "\(server.stderr)")

    let text = server.stderr
    #expect(text.hasSuffix("\n"))
    var records: [[String: Any]] = []
    for line in text.split(separator: "\n") {
      let record: [String: Any]?
      if format == "json" {
        record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      } else {
        record = LogFormatTests.parseLogfmt(String(line)).map { fields in
          Dictionary(fields.map { ($0.key, $0.value as Any) }, uniquingKeysWith: { first, _ in first })
        }
      }
      guard let record else {
        Issue.record("a line that is not one \(format) record: \(line)")
        continue
      }
      records.append(record)
    }
    let message = format == "json" ? "message" : "msg"
    func first(_ text: String, _ extra: ([String: Any]) -> Bool = { _ in true }) -> [String: Any]? {
      records.first { ($0[message] as? String) == text && extra($0) }
    }
    /// A number in JSON; in logfmt, text that reads as one.
    func number(_ value: Any?) -> Double? {
      if format == "json" {
        guard !(value is String), let number = value as? NSNumber else { return nil }
        return number.doubleValue
      }
      return (value as? String).flatMap(Double.init)
    }

    let listening = try #require(records.first { ($0[message] as? String)?.hasPrefix("listening on http://") == true })
    #expect(number(listening["port"]) == Double(port))
    #expect(number(listening["pid"]) == Double(server.pid))
    #expect(first("stopped") != nil, "no shutdown line")

    let request = try #require(first("request") { ($0["request_id"] as? String) == "live-1" }, "\(text)")
    #expect(number(request["status"]) == 200)
    #expect(number(request["ms"]) != nil)
    #expect(number(request["bytes"]) == Double(card.body.count))
    #expect(request["trace_id"] as? String == Self.traceID)

    // The worker's line for that render carries the same identity.
    let render = try #require(first("render") { ($0["request_id"] as? String) == "live-1" }, "\(text)")
    #expect(render["trace_id"] as? String == Self.traceID)
    #expect(render["label"] as? String == "innerpeace.worker")
    #expect(number(render["pid"]).map { Int32($0) != server.pid } == true)
    #expect(number(render["bytes"]) == Double(card.body.count))

    let forged = try #require(first("request") { ($0["request_id"] as? String) == madeID }, "\(text)")
    #expect(forged["user_agent"] as? String == Self.forgingAgent)
    #expect(number(forged["status"]) == 404)
    #expect((forged["route"] as? String) != "/admin")

    #expect(first("request") { ($0["request_id"] as? String) == "refused-1" }.map { number($0["status"]) } == 501)
    #expect(first("request") { ($0["request_id"] as? String) == "crash-1" }.map { number($0["status"]) } == 500)
  }
}
