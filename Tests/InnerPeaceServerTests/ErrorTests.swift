import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Testing

/// Bad requests: 400 naming the parameter, 404, 405 with Allow, 413, 414; every error body JSON
/// without internals; bad input never a 500.
@Suite struct ErrorTests {
  /// A query that must be refused with 400, and the parameter(s) the refusal may name.
  struct BadQuery: Sendable, CustomTestStringConvertible {
    let query: String
    let parameters: [String]
    init(_ query: String, _ parameters: String...) {
      self.query = query
      self.parameters = parameters
    }
    var testDescription: String { query }
  }

  /// Card options every image endpoint shares (preset, w, h, format, align).
  static let badOptions: [BadQuery] = [
    BadQuery("w=10&h=10", "w"),
    BadQuery("w=abc&h=100", "w"),
    BadQuery("w=100", "h", "w"),
    BadQuery("h=100", "w", "h"),
    BadQuery("w=300&h=abc", "h"),
    BadQuery("w=5000&h=300", "w"),
    BadQuery("w=300&h=99999999999999999999999", "h"),
    BadQuery("w=300&h=-300", "h"),
    BadQuery("w=1.5e3&h=300", "w"),
    BadQuery("w=&h=", "w", "h"),
    BadQuery("preset=huge", "preset"),
    BadQuery("preset=", "preset"),
    BadQuery("preset=0x0", "preset"),
    BadQuery("preset=5000x5000", "preset"),
    BadQuery("preset=-300x300", "preset"),
    BadQuery("preset=og&w=300&h=300", "preset"),
    BadQuery("format=gif", "format"),
    BadQuery("format=", "format"),
    BadQuery("align=left", "align"),
    BadQuery("align=", "align"),
    BadQuery("preset=%FF", "preset"),
    BadQuery("preset=og%00", "preset"),
  ]

  @Test(arguments: ["/random.png", "/random.webp", "/cards/0.png", "/today.jpg", "/card.png?text=hi"])
  func badOptionsAre400NamingTheParameter(endpoint: String) async throws {
    try await withRouter { client, _ in
      for bad in Self.badOptions {
        let separator = endpoint.contains("?") ? "&" : "?"
        let reply = try await client.get(endpoint + separator + bad.query)
        expectError(reply, status: 400, parameterAnyOf: bad.parameters)
      }
    }
  }

  @Test func badSeedAndContradictingFormatAre400() async throws {
    try await withRouter { client, _ in
      for seed in ["-1", "abc", "1.5", "", "18446744073709551616", "0x10", "%FF", "+1", "%201"] {
        expectError(try await client.get("/random.png?seed=\(seed)"), status: 400, parameter: "seed")
      }
      for uri in [
        "/random.jpg?format=png", "/random.webp?format=jpeg", "/cards/0.jpg?format=webp", "/today.webp?format=png",
        "/random.png?format=jpeg", "/cards/3.jpeg?format=png", "/today.png?format=webp", "/card.png?text=hi&format=jpg",
      ] {
        expectError(try await client.get(uri), status: 400, parameter: "format")
      }
    }
  }

  /// /card.png's text: required, at most 5000 characters (413), valid UTF-8 without NUL or
  /// control characters, at most 8 combining marks on a character.
  @Test func customTextIsChecked() async throws {
    try await withRouter { client, _ in
      expectError(try await client.get("/card.png"), status: 400, parameter: "text")
      expectError(try await client.get("/card.png?author=Someone"), status: 400, parameter: "text")
      expectError(try await client.get("/card.png?text="), status: 400, parameter: "text")
      expectError(try await client.get("/card.png?text=%20%20%0A"), status: 400, parameter: "text")
      for bad in ["%FF", "a%FFb", "%C3", "%ED%A0%80", "%C0%AF", "%", "%4", "%G1", "%00", "a%00b", "a%1Bb", "a%7Fb"] {
        expectError(try await client.get("/card.png?text=\(bad)"), status: 400, parameter: "text")
      }
      // Zalgo: 9 combining acute accents on one "e".
      let zalgo = "e" + String(repeating: "\u{0301}", count: 9)
      #expect(zalgo.count == 1)
      expectError(try await client.get("/card.png?text=\(queryEncoded(zalgo))"), status: 400, parameter: "text")
      let zalgoMany = String(repeating: "a" + String(repeating: "\u{0489}", count: 12) + " ", count: 20)
      expectError(try await client.get("/card.png?text=\(queryEncoded(zalgoMany))"), status: 400, parameter: "text")

      // Over 5000 characters: 413 naming text (ASCII, and two-byte characters).
      let long = String(repeating: "a", count: 5001)
      expectError(try await client.get("/card.png?text=\(long)"), status: 413, parameter: "text")
      let longAccented = String(repeating: "é", count: 5001)
      expectError(try await client.get("/card.png?text=\(queryEncoded(longAccented))"), status: 413, parameter: "text")

      // The author: valid UTF-8, no NUL, one line, at most 200 characters.
      for bad in ["%FF", "%00", "a%0Ab", String(repeating: "a", count: 201)] {
        expectError(try await client.get("/card.png?text=hi&author=\(bad)"), status: 400, parameter: "author")
      }
    }
  }

  /// Exactly 8 combining marks on one character is allowed (the limit is inclusive).
  @Test func eightCombiningMarksRender() async throws {
    try await withRouter { client, _ in
      let text = "calm e" + String(repeating: "\u{0301}", count: 8)
      let reply = try await client.get("/card.png?text=\(queryEncoded(text))&w=200&h=200")
      expectCard(reply, format: "png", size: (200, 200))
    }
  }

  /// A request target over 32768 bytes is 414, wherever it points.
  @Test func overlongURIIs414() async throws {
    try await withRouter { client, _ in
      let filler = String(repeating: "a", count: HTTPLimits.maximumURILength)
      for uri in [
        "/card.png?text=\(filler)", "/random.png?seed=1&x=\(filler)", "/nope?x=\(filler)", "/cards/0.png?\(filler)",
      ] {
        expectError(try await client.get(uri), status: 414)
      }
      // Just under the limit is not refused for its length (it is refused for its text, 413).
      let under = "/card.png?text=" + String(repeating: "a", count: HTTPLimits.maximumURILength - 15)
      #expect(under.utf8.count == HTTPLimits.maximumURILength)
      expectError(try await client.get(under), status: 413, parameter: "text")
    }
  }

  /// Unknown paths are 404 for GET and for POST alike: the 405 is only for a path some route of
  /// the route table matches (`/cards/0.png/x` and `/quotes/3/x` match none).
  @Test(arguments: [
    "/nope", "/random.png/x", "/card", "/cards", "/cards/x.png", "/cards/x.gif", "/cards/03.gif", "/random.",
    "/random.g-f", "/quotes/3.gif", "/random.gif/x",
    "/quotes/3/x", "/cards/0.png/x", "/healthz/x", "/openapi.json", "/index.html", "/..%2F..%2Fetc%2Fpasswd",
    "/Resources/quotes.json",
    "/Fonts", "/.build", "/random.png%00",
  ])
  func unknownRouteIs404(uri: String) async throws {
    try await withRouter { client, _ in
      expectError(try await client.get(uri), status: 404)
      expectError(try await client.request(uri, method: .post), status: 404)
    }
  }

  /// An image path whose extension names no format is the documented 400 naming the format and
  /// the known ones (those of `ImageFormat`, so a new format joins them), as `format=gif` is; not
  /// a 404 "no such endpoint". Another method on it stays a 404: no route has that path.
  @Test(arguments: [
    ("/cards/1.gif", "gif"), ("/random.bmp", "bmp"), ("/today.tiff", "tiff"), ("/card.jxl?text=hi", "jxl"),
    ("/cards/0.PNG", "PNG"), ("/cards/3.JPEG", "JPEG"), ("/random.gif?seed=1", "gif"),
  ])
  func unknownExtensionIs400NamingTheFormat(uri: String, format: String) async throws {
    try await withRouter { client, _ in
      for method in [HTTPRequest.Method.get, .head] {
        let reply = try await client.request(uri, method: method)
        #expect(reply.status == 400, "\(method) \(uri): \(reply)")
        guard method == .get else { continue }
        let message = expectError(reply, status: 400, parameter: "format")["message"] as? String ?? ""
        #expect(message.contains("'\(format)'"), "\(message)")
        for known in ImageFormat.allCases.flatMap(\.fileExtensions) {
          #expect(message.contains(known), "\(message) names \(known)")
        }
      }
      expectError(try await client.request(uri, method: .post), status: 404)
    }
  }

  @Test(arguments: [HTTPRequest.Method.post, .put, .delete, .patch])
  func wrongMethodIs405WithAllow(method: HTTPRequest.Method) async throws {
    try await withRouter { client, _ in
      for uri in [
        "/random.png", "/card.jpg", "/today.webp", "/cards/0.png", "/quotes", "/quotes/3", "/healthz", "/metrics",
        "/openapi.yaml", "/",
      ] {
        let reply = try await client.request(uri, method: method)
        expectError(reply, status: 405)
        #expect(reply.header("Allow") == "GET, HEAD", "\(method) \(uri): \(reply)")
      }
    }
  }

  /// HEAD is GET without the body (RFC 9110 §9.1: a general-purpose server MUST support GET and
  /// HEAD); today every HEAD is a 405 that claims only GET is allowed.
  @Test func headIsServedLikeGet() async throws {
    try await withRouter { client, _ in
      for uri in ["/healthz", "/quotes/3", "/cards/0.png?w=200&h=200"] {
        let head = try await client.request(uri, method: .head)
        #expect(head.status == 200, "HEAD \(uri): \(head)")
        #expect(head.body.count == 0, "HEAD \(uri) must not send content")
        if head.status == 200 {
          let get = try await client.get(uri)
          #expect(head.header("Content-Type") == get.header("Content-Type"), "HEAD \(uri)")
        }
      }
    }
  }

  /// Odd but harmless queries: never a 500 (they are either served or refused with a 4xx).
  @Test func oddInputNeverA500() async throws {
    try await withRouter { client, _ in
      let uris = [
        "/random.png?w=200&h=200&&&", "/random.png?w=200&h=200&=", "/random.png?w=200&h=200&a",
        "/random.png?w=200&h=200&w=9999", "/random.png?w=200&h=200&%FF=1", "/random.png?w=200&h=200&%=1",
        "/random.png?seed=99999999999999999999999999999", "/random.png?preset=%E2%80%AE", "/random.png?preset=1x",
        "/random.png?preset=x1", "/random.png?preset=200x200x200", "/random.png?preset=4097x200",
        "/random.png?preset=200X200&seed=1", "/cards/0.png?w=200&h=200&picture=%00",
        "/cards/0.png?picture=%FF", "/cards/99999999999999999999999.png", "/cards/%FF.png", "/cards/%00.png",
        "/quotes/99999999999999999999999", "/quotes/%FF", "/quotes/-0", "/card.png?text=%E2%80%AE&w=200&h=200",
        "/card.png?text=\(queryEncoded("\u{202E}abc\u{FEFF}\u{200D}"))&w=200&h=200",
        "/card.png?text=\(queryEncoded("\u{10FFFF}\u{E000}"))&w=200&h=200",
        "/today.png?w=200&h=200&author=maybe", "/today.png?seed=%00",
      ]
      for uri in uris {
        let reply = try await client.get(uri)
        #expect(reply.status < 500, "\(uri) → \(reply)")
        if reply.status >= 400 { expectCleanErrorBody(reply) }
        if reply.status == 200 { #expect(reply.body.count > 0, "\(uri)") }
      }
    }
  }
}
