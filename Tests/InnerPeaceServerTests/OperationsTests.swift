import Foundation
import InnerPeace
import InnerPeaceServer
import Logging
import NIOConcurrencyHelpers
import Testing

/// What an operator reads: the metrics and the JSON log lines.
@Suite struct OperationsTests {
  /// Request and render histograms with bounded labels, the build, and the process's figures.
  @Test func metricsCoverRequestsRendersBuildAndProcess() async throws {
    try await withRouter { client, _ in
      #expect(try await client.get("/cards/1.png?w=200&h=200").status == 200)
      #expect(try await client.get("/cards/2.webp?preset=square").status == 200)
      #expect(try await client.get("/healthz").status == 200)
      #expect(try await client.get("/no-such-route").status == 404)
      let text = try await metrics(client)
      #expect(
        metricValue(text, "http_request_duration_seconds_count", labels: ["route": "/healthz", "status": "200"]) == 1)
      #expect(
        metricValue(text, "http_request_duration_seconds_bucket", labels: ["route": "/healthz", "le": "+Inf"]) == 1)
      #expect(metricValue(text, "http_request_duration_seconds_count", labels: ["status": "404"]) != nil)
      #expect(!text.contains("no-such-route"), "a raw path became a label")
      #expect(
        metricValue(text, "innerpeace_render_duration_seconds_count", labels: ["preset": "custom", "format": "png"])
          == 1)
      #expect(
        metricValue(text, "innerpeace_render_duration_seconds_count", labels: ["preset": "square", "format": "webp"])
          == 1)
      #expect(metricValue(text, "innerpeace_build_info", labels: ["version": InnerPeaceVersion.current]) == 1)
      let resident = try #require(metricValue(text, "process_resident_memory_bytes"))
      #expect(resident > 10_000_000 && resident < 100_000_000_000)
      #expect((metricValue(text, "process_open_fds") ?? 0) >= 3)
      #expect((metricValue(text, "process_cpu_seconds_total") ?? 0) > 0)
      #expect(!text.contains("# TYPE innerpeace_render_duration_seconds summary"))
    }
  }

  /// One JSON object per line, with the time, level, message and the metadata as strings.
  @Test func jsonLinesCarryTheFields() throws {
    let lines = NIOLockedValueBox<[String]>([])
    let logger = Logger(label: "innerpeace") { label in
      JSONLogHandler(label: label, level: .info) { line in lines.withLockedValue { $0.append(line) } }
    }
    logger.debug("not at info")
    logger.info(
      "request",
      metadata: [
        "method": "GET", "path": "/cards/1.png", "query": "w=200&h=\"x\"", "status": "200", "bytes": "71483",
        "ms": "3.2", "client": "127.0.0.1", "user_agent": "Agent/1.0 \u{1F33F}",
      ])
    let written = lines.withLockedValue { $0 }
    #expect(written.count == 1)
    let line = try #require(written.first)
    #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
    #expect(object["level"] == "info")
    #expect(object["message"] == "request")
    #expect(object["query"] == "w=200&h=\"x\"")
    #expect(object["user_agent"] == "Agent/1.0 \u{1F33F}")
    for key in ["method", "path", "status", "bytes", "ms", "client"] { #expect(object[key] != nil, "\(key)") }
    let time = try #require(object["time"])
    #expect(
      time.hasSuffix("Z")
        && ISO8601DateFormatter().date(
          from: time.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression)) != nil,
      "\(time)")
  }
}
