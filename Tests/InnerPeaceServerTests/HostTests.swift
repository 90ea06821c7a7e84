import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceQuery
import Testing

@testable import InnerPeaceServer

/// No request's host reaches a cached response unchecked: the absolute-form target wins over
/// `Host`, an HTTP/1.1 request without exactly one `Host` is a 400, `allowedHosts` refuses other
/// hosts, links made from an unchecked host are cached privately only, and behind a trusted
/// proxy the nearest proxy's forwarded values count.
@Suite(.tags(.live, .process, .binary)) struct HostTests {
  /// One request written as raw bytes on a new connection (closed after it), its answer.
  static func raw(_ port: Int, _ head: String) async throws -> Reply {
    try await onOwnThread {
      let socket = try TestSocket(port: port)
      try? socket.send(head)
      return try replyOf(socket.readToEnd(timeout: 20))
    }
  }

  static func withLive(
    _ configuration: ServerConfiguration = testConfiguration(), _ body: @Sendable (Int) async throws -> Void
  ) async throws {
    try await LiveServer.with(renderer: CannedRenderer(base: try realRenderer()), configuration: configuration) {
      port, _ in try await body(port)
    }
  }

  @Test func absoluteFormTargetWinsAndHostMustBeOne() async throws {
    try await Self.withLive { port in
      // RFC 9112 §3.2.2: the target's authority, not Host.
      let absolute = try await Self.raw(
        port, "GET http://victim.example/quotes/0 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
      #expect(absolute.status == 200, "\(absolute)")
      let object = absolute.json as? [String: Any]
      #expect((object?["pageURL"] as? String) == "http://victim.example/q/0", "\(absolute)")
      #expect(!absolute.text.contains("evil.example"))

      let plain = try await Self.raw(
        port, "GET /quotes/0 HTTP/1.1\r\nHost: cards.example:8080\r\nConnection: close\r\n\r\n")
      #expect((plain.json as? [String: Any])?["pageURL"] as? String == "http://cards.example:8080/q/0", "\(plain)")

      for (name, head) in [
        ("no Host", "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"),
        ("two Host fields", "GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n"),
        (
          "two Host fields, absolute form",
          "GET http://a.example/healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n"
        ),
        ("absolute form, no Host", "GET http://a.example/healthz HTTP/1.1\r\nConnection: close\r\n\r\n"),
        ("a Host that is no host", "GET /healthz HTTP/1.1\r\nHost: a\"b<c\r\nConnection: close\r\n\r\n"),
        (
          "a target authority with user info",
          "GET http://me@a.example/healthz HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n"
        ),
      ] {
        let reply = try await Self.raw(port, head)
        expectError(reply, status: 400)
        #expect(reply.status == 400, "\(name): \(reply)")
      }
      // HTTP/1.0 needs no Host; the mark cannot be sent by a client.
      let old = try await Self.raw(port, "GET /healthz HTTP/1.0\r\n\r\n")
      #expect(old.status == 200, "\(old)")
      let marked = try await Self.raw(
        port, "GET /healthz HTTP/1.1\r\nHost: a.example\r\nX-InnerPeace-Host-Problem: x\r\nConnection: close\r\n\r\n")
      #expect(marked.status == 200, "\(marked)")
    }
  }

  @Test func allowedHostsRefuseOthers() async throws {
    var configuration = testConfiguration()
    configuration.allowedHosts = ["cards.example", "other.example:8443"]
    try configuration.validate()
    try await Self.withLive(configuration) { port in
      func status(_ host: String, target: String = "/healthz") async throws -> Int {
        try await Self.raw(port, "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n").status
      }
      #expect(try await status("cards.example") == 200)
      #expect(try await status("CARDS.example:8080") == 200, "a name without a port admits any port")
      #expect(try await status("other.example:8443") == 200)
      #expect(try await status("other.example") == 400, "a name with a port admits that port only")
      #expect(try await status("other.example:80") == 400)
      #expect(try await status("evil.example") == 400)
      #expect(try await status("evil.example", target: "http://cards.example/healthz") == 200)
      #expect(try await status("cards.example", target: "http://evil.example/healthz") == 400)
      let refused = try await Self.raw(port, "GET /q/0 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
      expectError(refused, status: 400)
      let old = try await Self.raw(port, "GET /healthz HTTP/1.0\r\n\r\n")
      expectError(old, status: 400)
    }
    var bad = testConfiguration()
    bad.allowedHosts = ["cards.example/x"]
    #expect(throws: ServerConfigurationError.self) { try bad.validate() }
  }

  /// Every response whose links come from the request's host is private when that host is not
  /// checked, and public (as before) with a public URL or allowed hosts.
  @Test(arguments: [0, 1, 2])
  func linksFromAnUncheckedHostAreCachedPrivately(setting: Int) async throws {
    var configuration = testConfiguration()
    if setting == 1 { configuration.publicURL = "https://cards.example" }
    if setting == 2 { configuration.allowedHosts = ["localhost"] }
    try await withRouter(renderer: CannedRenderer(base: try realRenderer()), configuration: configuration) {
      client, service in
      let paths = [
        "/", "/q/today", "/q/0", "/feed.xml", "/calendar.ics", "/quotes", "/quotes/0", "/today.png",
        "/cards/0.png", "/cards/0.png?v=\(service.contentVersion)",
      ]
      for path in paths {
        let reply = try await client.get(path)
        #expect(reply.status == 200, "\(path): \(reply)")
        let policy = reply.header("Cache-Control") ?? ""
        if setting == 0 {
          #expect(policy.hasPrefix("private"), "\(path): \(policy)")
        } else {
          #expect(policy.hasPrefix("public"), "\(path): \(policy)")
        }
        if let etag = reply.header("ETag") {
          let revalidated = try await client.get(path, ifNoneMatch: etag)
          // The same policy (the max-age of /today counts down between the two requests).
          let word = { (value: String?) in value?.prefix { $0 != "," } }
          #expect(revalidated.status == 304 && word(revalidated.header("Cache-Control")) == word(policy), "\(path)")
        }
      }
      // Cards without links from the host stay public either way.
      let custom = try await client.get("/card.png?text=Hello")
      #expect(custom.header("Cache-Control")?.hasPrefix("public") == true)
    }
  }

  /// `serve` without a public URL or allowed hosts says once, at start-up, that links from the
  /// request's host are cached privately; with either, it says nothing of it.
  @Test(.timeLimit(.minutes(5)))
  func startUpWarnsOnceWithoutACheckedOrigin() async throws {
    let warning = "neither --public-url nor --allowed-host is set"
    for (extra, warns) in [
      ([String](), true), (["--allowed-host", "localhost"], false), (["--public-url", "https://cards.example"], false),
    ] {
      let server = try await ServerProcess.start(
        arguments: ["serve", "--port", "0", "--in-process", "--concurrency", "1"] + extra)
      defer { server.stop() }
      #expect(server.port != nil, "\(server.stderr)")
      let count = server.stderr.components(separatedBy: warning).count - 1
      #expect(count == (warns ? 1 : 0), "\(extra): \(server.stderr)")
    }
  }

  /// Behind a trusted proxy, a forwarded host that is no host is refused and the request's own
  /// `Host` makes the links (not `http://localhost`); under allowed hosts that `Host` is checked,
  /// and a well-formed forwarded host that is not allowed is still a 400.
  @Test(arguments: [false, true])
  func refusedForwardedHostFallsBackToHost(allowsHosts: Bool) async throws {
    var configuration = testConfiguration()
    configuration.trustsForwardedHeaders = true
    if allowsHosts { configuration.allowedHosts = ["cards.example"] }
    try await Self.withLive(configuration) { port in
      func reply(host: String, forwarded: String) async throws -> Reply {
        try await Self.raw(
          port,
          "GET /quotes/0 HTTP/1.1\r\nHost: \(host)\r\nX-Forwarded-Host: \(forwarded)\r\n"
            + "X-Forwarded-Proto: https\r\nConnection: close\r\n\r\n")
      }
      for refused in ["a\"b<c", "cards.example/x", "x y"] {
        let answer = try await reply(host: "cards.example:8080", forwarded: refused)
        #expect(answer.status == 200, "\(refused): \(answer)")
        let pageURL = (answer.json as? [String: Any])?["pageURL"] as? String
        #expect(pageURL == "https://cards.example:8080/q/0", "\(refused): \(answer)")
      }
      let forwarded = try await reply(host: "cards.example", forwarded: "other.example")
      if allowsHosts {
        expectError(forwarded, status: 400)
        expectError(try await reply(host: "evil.example", forwarded: "a\"b"), status: 400)
      } else {
        #expect((forwarded.json as? [String: Any])?["pageURL"] as? String == "https://other.example/q/0")
      }
    }
  }

  /// Behind a trusted proxy, the value the nearest proxy appended counts, not the client's.
  @Test func forwardedValuesAreTheNearestProxys() async throws {
    var trusting = testConfiguration()
    trusting.trustsForwardedHeaders = true
    try await withRouter(renderer: CannedRenderer(base: try realRenderer()), configuration: trusting) { client, _ in
      func pageURL(_ headers: HTTPFields) async throws -> String? {
        (try await client.request("/quotes/0", headers: headers).json as? [String: Any])?["pageURL"] as? String
      }
      let appended: HTTPFields = [
        .xForwardedHost: "evil.example, cards.example", .xForwardedProto: "http, https",
      ]
      let viaAppended = try await pageURL(appended)
      #expect(viaAppended == "https://cards.example/q/0")
      var twoFields = HTTPFields()
      twoFields.append(HTTPField(name: .xForwardedHost, value: "evil.example"))
      twoFields.append(HTTPField(name: .xForwardedHost, value: "cards.example"))
      let viaTwoFields = try await pageURL(twoFields)
      #expect(viaTwoFields == "http://cards.example/q/0")
      let forwarded: HTTPFields = [
        .forwarded: "for=192.0.2.1;host=evil.example;proto=http, for=192.0.2.2;host=\"cards.example:8443\";proto=https"
      ]
      let viaForwarded = try await pageURL(forwarded)
      #expect(viaForwarded == "https://cards.example:8443/q/0")
    }
    #expect(
      ForwardedHeader.lastElement(["for=a;host=\"x,y\", For=b;HOST=\"c\\\"d\";proto=https"]) == [
        "for": "b", "host": "c\"d", "proto": "https",
      ])
    #expect(ForwardedHeader.lastElement(["for=a;host=\"x,y;z\""]) == ["for": "a", "host": "x,y;z"])
    #expect(ForwardedHeader.lastElement([]) == [:])
    #expect(ForwardedHeader.lastValue(["a, b", "c,  d "]) == "d")
    #expect(ForwardedHeader.lastValue(["a,"]) == nil)
  }
}
