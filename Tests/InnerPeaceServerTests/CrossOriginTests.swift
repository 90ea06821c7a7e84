import Foundation
import HTTPTypes
import InnerPeaceServer
import Testing

/// `--cors-origin`: CORS headers on cards, quotes and feeds, preflights, and nothing when off.
@Suite struct CrossOriginTests {
  static let page = "https://www.example.com"

  static func configuration(_ origins: [String]) -> ServerConfiguration {
    var configuration = testConfiguration()
    configuration.corsOrigins = origins
    return configuration
  }

  static func headers(origin: String?, _ more: [HTTPField.Name: String] = [:]) -> HTTPFields {
    var fields = HTTPFields()
    if let origin { fields[.origin] = origin }
    for (name, value) in more { fields[name] = value }
    return fields
  }

  static func preflight(_ origin: String, method: String = "GET") -> HTTPFields {
    headers(origin: origin, [.accessControlRequestMethod: method, .accessControlRequestHeaders: "if-none-match"])
  }

  /// Off by default: no CORS header, and OPTIONS is the 405 it was.
  @Test func offByDefault() async throws {
    try await withRouter(configuration: testConfiguration()) { client, _ in
      let card = try await client.request("/cards/0.png?w=240&h=200", headers: Self.headers(origin: Self.page))
      #expect(card.status == 200)
      #expect(card.header("Access-Control-Allow-Origin") == nil)
      #expect(!card.headerList("Vary").contains("Origin"))
      let options = try await client.request("/cards/0.png", method: .options, headers: Self.preflight(Self.page))
      expectError(options, status: 405)
      #expect(options.header("Access-Control-Allow-Origin") == nil)
    }
  }

  /// A listed origin reads cards (200 and 304), quotes, feeds and their JSON errors; another
  /// origin gets no CORS header; every response there varies by Origin; the page, health and
  /// the document stay same-origin.
  @Test func listedOrigins() async throws {
    try await withRouter(configuration: Self.configuration([Self.page, "http://localhost:3000"])) { client, _ in
      let card = try await client.request("/cards/0.png?w=240&h=200", headers: Self.headers(origin: Self.page))
      #expect(card.status == 200)
      #expect(card.header("Access-Control-Allow-Origin") == Self.page)
      #expect(card.headerList("Vary").contains("Origin"), "\(card.headers)")
      let exposed = try #require(card.header("Access-Control-Expose-Headers"))
      for name in ["ETag", "Content-Location", "X-Missing-Glyphs", "Retry-After"] {
        #expect(exposed.contains(name), "\(exposed)")
      }
      let etag = try #require(card.header("ETag"))
      let revalidated = try await client.request(
        "/cards/0.png?w=240&h=200", headers: Self.headers(origin: Self.page, [.ifNoneMatch: etag]))
      #expect(revalidated.status == 304)
      #expect(revalidated.header("Access-Control-Allow-Origin") == Self.page)

      let stranger = try await client.request(
        "/cards/0.png?w=240&h=200", headers: Self.headers(origin: "https://evil.example"))
      #expect(stranger.header("Access-Control-Allow-Origin") == nil)
      #expect(stranger.headerList("Vary").contains("Origin"))
      let sameOrigin = try await client.get("/cards/0.png?w=240&h=200")
      #expect(sameOrigin.header("Access-Control-Allow-Origin") == nil)
      #expect(sameOrigin.headerList("Vary").contains("Origin"), "a shared cache must not reuse it for a page")

      let negotiated = try await client.request("/cards/0?w=240&h=200", headers: Self.headers(origin: Self.page))
      #expect(negotiated.headerList("Vary").contains("Accept") && negotiated.headerList("Vary").contains("Origin"))
      // One Vary field (some caches read only the first).
      #expect(negotiated.headerValues("Vary").count == 1, "\(negotiated.headers)")
      let missing = try await client.request("/cards/999999.png", headers: Self.headers(origin: Self.page))
      expectError(missing, status: 404)
      #expect(missing.header("Access-Control-Allow-Origin") == Self.page)
      let badParameter = try await client.request("/cards/0.png?w=1", headers: Self.headers(origin: Self.page))
      expectError(badParameter, status: 400)
      #expect(badParameter.header("Access-Control-Allow-Origin") == Self.page)
      for path in ["/quotes", "/quotes/0", "/feed.xml", "/calendar.ics", "/random.png?seed=1&w=240&h=200"] {
        let reply = try await client.request(path, headers: Self.headers(origin: "http://localhost:3000"))
        #expect(reply.status == 200, "\(path)")
        #expect(reply.header("Access-Control-Allow-Origin") == "http://localhost:3000", "\(path)")
      }
      for path in ["/", "/healthz", "/openapi.yaml", "/metrics", "/card.json?text=hi"] {
        let reply = try await client.request(path, headers: Self.headers(origin: Self.page))
        #expect(reply.header("Access-Control-Allow-Origin") == nil, "\(path)")
        #expect(!reply.headerList("Vary").contains("Origin"), "\(path)")
      }
    }
  }

  /// A preflight from a listed origin for GET or HEAD is a 204 with the methods, headers and max
  /// age; from another origin, for another method or on a same-origin route, the 405 as before.
  @Test func preflights() async throws {
    try await withRouter(configuration: Self.configuration([Self.page])) { client, _ in
      for path in ["/cards/0.png", "/card.webp", "/today", "/quotes/0", "/feed.xml"] {
        let reply = try await client.request(path, method: .options, headers: Self.preflight(Self.page))
        #expect(reply.status == 204, "\(path) \(reply)")
        #expect(reply.header("Access-Control-Allow-Origin") == Self.page)
        #expect(reply.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
        #expect(reply.header("Access-Control-Allow-Headers")?.contains("If-None-Match") == true)
        #expect(reply.header("Access-Control-Max-Age") == "86400")
        #expect(reply.headerList("Vary").contains("Origin"))
        #expect(reply.body.isEmpty)
      }
      let head = try await client.request(
        "/cards/0.png", method: .options, headers: Self.preflight(Self.page, method: "HEAD"))
      #expect(head.status == 204)
      for (path, fields) in [
        ("/cards/0.png", Self.preflight("https://evil.example")),
        ("/cards/0.png", Self.preflight(Self.page, method: "POST")),
        ("/cards/0.png", Self.headers(origin: Self.page)), ("/healthz", Self.preflight(Self.page)),
        ("/", Self.preflight(Self.page)),
      ] {
        let reply = try await client.request(path, method: .options, headers: fields)
        expectError(reply, status: 405)
        #expect(reply.header("Access-Control-Allow-Methods") == nil, "\(path) \(fields)")
      }
      expectError(
        try await client.request("/no-such-path", method: .options, headers: Self.preflight(Self.page)), status: 404)
    }
  }

  /// `*`: any origin, `Access-Control-Allow-Origin: *`, and no `Vary: Origin` (the answer is the same).
  @Test func anyOrigin() async throws {
    try await withRouter(configuration: Self.configuration(["*"])) { client, _ in
      let card = try await client.request("/cards/0.png?w=240&h=200", headers: Self.headers(origin: "null"))
      #expect(card.header("Access-Control-Allow-Origin") == "*")
      #expect(!card.headerList("Vary").contains("Origin"))
      let preflight = try await client.request(
        "/quotes", method: .options, headers: Self.preflight("https://a.example"))
      #expect(preflight.status == 204)
      #expect(preflight.header("Access-Control-Allow-Origin") == "*")
    }
  }

  @Test func originsAreChecked() throws {
    for good in [["https://a.example"], ["http://localhost:8080", "https://A.example/"], ["*"], ["app+x.y-z://host"]] {
      var configuration = ServerConfiguration()
      configuration.corsOrigins = good
      #expect(throws: Never.self) { try configuration.validate() }
    }
    for bad in [
      ["https://a.example/path"], ["a.example"], ["https://"], ["*", "https://a.example"], ["https://a b"],
      ["https://a.example:"], ["https://a.example?x"], ["1x://a.example"], [""], ["https://a.example#x"],
    ] {
      var configuration = ServerConfiguration()
      configuration.corsOrigins = bad
      #expect(throws: ServerConfigurationError.self, "\(bad)") { try configuration.validate() }
    }
  }
}
