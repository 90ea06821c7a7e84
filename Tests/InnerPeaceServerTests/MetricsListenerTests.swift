import Foundation
import InnerPeaceServer
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `--metrics-address`: `/metrics` on a listener of its own, a 404 on the public port.
@Suite struct MetricsListenerTests {
  /// With a metrics address the public router has no `/metrics`: a 404 JSON for GET, HEAD and
  /// POST alike (before, a POST was a 405 naming the path as served), and `/healthz` unchanged.
  @Test func publicRouterHasNoMetrics() async throws {
    var configuration = testConfiguration()
    configuration.metricsAddress = "127.0.0.1:0"
    try await withRouter(configuration: configuration) { client, _ in
      expectError(try await client.get("/metrics"), status: 404)
      #expect(try await client.request("/metrics", method: .head).status == 404)
      expectError(try await client.request("/metrics", method: .post), status: 404)
      #expect(try await client.get("/healthz").status == 200)
    }
    // Without it, as before.
    try await withRouter(configuration: testConfiguration()) { client, _ in
      let scrape = try await client.get("/metrics")
      #expect(scrape.status == 200)
      #expect(scrape.text.contains("process_start_time_seconds "), "\(scrape.text.prefix(300))")
    }
  }

  @Test func addressesAreChecked() throws {
    for good in ["127.0.0.1:9090", "localhost:0", "[::1]:9090", "0.0.0.0:65535"] {
      #expect(MetricsAddress(good) != nil, "\(good)")
    }
    #expect(MetricsAddress("[::1]:9090") == MetricsAddress("::1:9090"))
    for bad in ["", "9090", ":9090", "host:", "host:65536", "host:-1", "host:90a", "a b:1", "http://x:1", "host:+1"] {
      #expect(MetricsAddress(bad) == nil, "\(bad)")
      var configuration = ServerConfiguration()
      configuration.metricsAddress = bad
      #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
    }
  }
}

/// The real binary with `INNERPEACE_METRICS_ADDRESS`: the metrics on the second port, with the
/// process's start time as `/proc` has it, and a 404 on the public one.
@Suite(.tags(.live, .process, .binary)) struct MetricsListenerProcessTests {
  @Test(.timeLimit(.minutes(2)))
  func metricsOnTheirOwnPort() async throws {
    let server = try await ServerProcess.start(
      arguments: ["serve", "--port", "0", "--host", "127.0.0.1", "--in-process"],
      environment: ["INNERPEACE_METRICS_ADDRESS": "127.0.0.1:0"])
    defer { server.stop() }
    let publicPort = try #require(server.port, "\(server.stderr)")
    let line = try #require(await server.waitForLine(containing: "metrics on http://"), "\(server.stderr)")
    let match = try #require(line.firstMatch(of: #/metrics on http://127\.0\.0\.1:(\d+)/metrics/#), "\(line)")
    let metricsPort = try #require(Int(match.1))
    #expect(metricsPort != publicPort)

    func get(_ port: Int, _ requestLine: String) async throws -> RawHTTPResponse {
      try await onOwnThread { try RawHTTPConnection(port: port, request: requestLine).response(timeout: 30) }
    }
    let scrape = try await get(metricsPort, "GET /metrics HTTP/1.1")
    #expect(scrape.status == 200)
    #expect(scrape.text.contains("innerpeace_build_info"), "\(scrape.text.prefix(300))")
    let hidden = try await get(publicPort, "GET /metrics HTTP/1.1")
    #expect(hidden.status == 404)
    #expect(hidden.text.contains("\"error\""), "\(hidden.text)")
    #expect(try await get(publicPort, "GET /healthz HTTP/1.1").status == 200)
    #expect(try await get(metricsPort, "GET /healthz HTTP/1.1").status == 404)

    // The start time, against the server's own /proc entry (boot time + start ticks).
    let exported = try #require(
      scrape.text.split(separator: "\n").first { $0.hasPrefix("process_start_time_seconds ") }
        .flatMap { Double($0.split(separator: " ")[1]) }, "\(scrape.text.prefix(2000))")
    let stat = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/stat", encoding: .utf8)
    let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
    let boot = try #require(
      try String(contentsOfFile: "/proc/stat", encoding: .utf8).split(separator: "\n")
        .first { $0.hasPrefix("btime ") }.flatMap { Double($0.split(separator: " ")[1]) })
    let started = boot + (try #require(Double(fields[19]))) / Double(sysconf(Int32(_SC_CLK_TCK)))
    #expect(abs(exported - started) < 0.05, "exported \(exported), /proc \(started)")
    #expect(exported <= Date().timeIntervalSince1970)

    server.signal(SIGTERM)
    #expect(try await server.waitForExit(timeout: .seconds(60)) == 0, "\(server.stderr)")
  }
}
