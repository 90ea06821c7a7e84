import CInnerPeace
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import Testing

@testable import InnerPeaceServer

/// The text and JSON endpoints are sent gzip-compressed to a client that accepts gzip, with their
/// own ETag, `Vary: Accept-Encoding` and 304s for the representation the client would get;
/// images never are.
@Suite struct CompressionTests {
  /// `bytes` decompressed from one gzip member (libdeflate, as the service compresses).
  static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let decompressor = try #require(libdeflate_alloc_decompressor())
    defer { libdeflate_free_decompressor(decompressor) }
    var output = [UInt8](repeating: 0, count: 16 << 20)
    var written = 0
    let result = bytes.withUnsafeBytes { input in
      output.withUnsafeMutableBytes { out in
        libdeflate_gzip_decompress(decompressor, input.baseAddress, input.count, out.baseAddress, out.count, &written)
      }
    }
    #expect(result == LIBDEFLATE_SUCCESS, "not one gzip member")
    return Array(output.prefix(written))
  }

  static func get(
    _ client: some TestClientProtocol, _ uri: String, encoding: String?, ifNoneMatch: String? = nil
  ) async throws -> Reply {
    var headers: HTTPFields = [:]
    if let encoding { headers[.acceptEncoding] = encoding }
    if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
    return try await client.request(uri, headers: headers)
  }

  /// `/quotes` (about 51 KB) compressed: the same JSON, a fraction of the bytes, its own ETag.
  @Test func quotesAreCompressedForAClientThatAcceptsGzip() async throws {
    try await withRouter(configuration: checkedOrigin()) { client, _ in
      let plain = try await Self.get(client, "/quotes", encoding: nil)
      #expect(plain.status == 200 && plain.header("Content-Encoding") == nil, "\(plain)")
      #expect(plain.header("Vary") == "Accept-Encoding", "\(plain)")
      let identityTag = try #require(plain.header("ETag"))
      let compressed = try await Self.get(client, "/quotes", encoding: "gzip, deflate, br")
      #expect(compressed.status == 200, "\(compressed)")
      #expect(compressed.header("Content-Encoding") == "gzip")
      #expect(compressed.header("Vary") == "Accept-Encoding")
      #expect(compressed.header("Content-Length") == String(compressed.body.count))
      #expect(compressed.header("Content-Type") == plain.header("Content-Type"))
      #expect(compressed.header("Link") == plain.header("Link"))
      #expect(try Self.gunzip(compressed.body) == plain.body, "the same JSON")
      #expect(plain.body.count > 40_000, "\(plain.body.count)")
      #expect(compressed.body.count * 3 < plain.body.count, "\(compressed.body.count) of \(plain.body.count) bytes")
      let gzipTag = try #require(compressed.header("ETag"))
      #expect(gzipTag == String(identityTag.dropLast()) + "-gzip\"", "\(gzipTag)")
      #expect(!gzipTag.hasPrefix("W/"))
      let again = try await Self.get(client, "/quotes", encoding: "gzip")
      #expect(again.body == compressed.body && again.header("ETag") == gzipTag, "made once, kept by its tag")
    }
  }

  /// Each representation is revalidated by its own tag: the gzip tag gets a 304 (with that tag
  /// and the Vary) only from a client that would get gzip, the identity tag only from one that
  /// would not; `*` matches either. The service's clock is fixed at 23:30 UTC: in the day's last
  /// hour the feeds' `max-age` is the seconds left in the day, which on the wall clock changed
  /// between the test's requests (CI's failure at 23:09, "max-age=3013" against 3021).
  @Test func notModifiedIsForTheRepresentationTheClientWouldGet() async throws {
    var configuration = checkedOrigin()
    let lastHour = Date(timeIntervalSince1970: 20_625 * 86_400 + 84_600)  // 2026-06-21 23:30 UTC
    configuration.now = { lastHour }
    try await withRouter(configuration: configuration) { client, _ in
      for path in ["/quotes", "/feed.xml", "/calendar.ics", "/cards/0.json"] {
        let plain = try await Self.get(client, path, encoding: nil)
        let compressed = try await Self.get(client, path, encoding: "gzip")
        #expect(plain.status == 200 && compressed.status == 200, "\(path): \(plain) \(compressed)")
        let identityTag = try #require(plain.header("ETag"), "\(path)")
        let gzipTag = try #require(compressed.header("ETag"), "\(path)")
        #expect(gzipTag != identityTag)
        if path == "/feed.xml" || path == "/calendar.ics" {
          // Half an hour left in the day (UTC, the default zone), under the feeds' hour.
          #expect(plain.header("Cache-Control")?.contains("max-age=1800") == true, "\(path): \(plain)")
        }

        for (encoding, tag, status, sentTag) in [
          ("gzip", gzipTag, 304, gzipTag), ("gzip", "W/\(gzipTag)", 304, gzipTag),
          ("gzip", "\"x\", \(gzipTag)", 304, gzipTag), ("gzip", identityTag, 200, gzipTag), ("gzip", "*", 304, gzipTag),
          ("identity", identityTag, 304, identityTag), ("identity", gzipTag, 200, identityTag),
          ("gzip;q=0", gzipTag, 200, identityTag), ("identity", "*", 304, identityTag),
        ] {
          let reply = try await Self.get(client, path, encoding: encoding, ifNoneMatch: tag)
          #expect(reply.status == status, "\(path) Accept-Encoding: \(encoding), If-None-Match: \(tag) → \(reply)")
          #expect(reply.header("ETag") == sentTag, "\(path) \(encoding) \(tag): \(reply)")
          #expect(reply.header("Vary") == "Accept-Encoding", "\(path): \(reply)")
          #expect(reply.header("Cache-Control") == plain.header("Cache-Control"), "\(path): \(reply)")
          #expect(reply.header("Content-Encoding") == (status == 200 && sentTag == gzipTag ? "gzip" : nil))
          if status == 304 { #expect(reply.body.isEmpty) }
        }
      }
    }
  }

  /// The text endpoints that gain are compressed; images, small answers and errors are not, and
  /// say nothing of Accept-Encoding.
  @Test func whatIsCompressed() async throws {
    try await withRouter(configuration: checkedOrigin()) { client, _ in
      for path in ["/openapi.yaml", "/feed.xml", "/calendar.ics", "/", "/q/0", "/q/today", "/card.json?text=hi"] {
        let plain = try await Self.get(client, path, encoding: nil)
        let compressed = try await Self.get(client, path, encoding: "gzip")
        #expect(compressed.header("Content-Encoding") == "gzip", "\(path): \(compressed)")
        #expect(try Self.gunzip(compressed.body).count == plain.body.count, "\(path)")
        #expect(compressed.body.count < plain.body.count, "\(path): \(compressed.body.count) ≥ \(plain.body.count)")
      }
      for path in ["/cards/0.png", "/cards/0", "/today.webp", "/quotes/0", "/healthz", "/favicon.ico", "/nope"] {
        let reply = try await Self.get(client, path, encoding: "gzip")
        #expect(reply.header("Content-Encoding") == nil, "\(path): \(reply)")
        #expect(reply.header("Vary")?.contains("Accept-Encoding") != true, "\(path): \(reply)")
      }
      let head = try await client.request("/quotes", method: .head, headers: [.acceptEncoding: "gzip"])
      #expect(head.status == 200 && head.header("Content-Encoding") == "gzip" && head.body.isEmpty, "\(head)")
    }
  }

  /// `Accept-Encoding` as RFC 9110 §12.5.3 reads it: weights, `*`, `x-gzip`, an explicit
  /// `identity` preferred.
  @Test(
    arguments: [
      (nil, false), ("", false), ("gzip", true), ("GZIP", true), ("x-gzip", true), ("gzip;q=0", false),
      ("gzip; q=0.001", true), ("*", true), ("*;q=0", false), ("gzip;q=0, *", false), ("br", false),
      ("br, *;q=0.1", true), ("identity;q=1, gzip;q=0.5", false), ("identity;q=0.5, gzip", true),
      ("gzip;q=1.5", false), ("deflate, gzip;q=0.8", true), ("identity", false),
    ] as [(String?, Bool)])
  func acceptEncodingIsRead(header: String?, gzip: Bool) {
    #expect(EncodingNegotiation.acceptsGzip(header) == gzip, "\(header ?? "none")")
  }

  @Test func tagsOfTheTwoRepresentations() {
    #expect(CompressionMiddleware.gzipTag("\"abc\"") == "\"abc-gzip\"")
    #expect(CompressionMiddleware.gzipTag("W/\"abc\"") == "W/\"abc-gzip\"")
    #expect(CompressionMiddleware.identityTags(standingFor: "\"abc-gzip\", W/\"d-gzip\"") == "\"abc\", W/\"d\"")
    #expect(CompressionMiddleware.identityTags(standingFor: "\"abc\"") == nil)
    #expect(CompressionMiddleware.identityTags(standingFor: "*") == "*")
    var headers: HTTPFields = [.vary: "Accept"]
    headers.addVary("Accept-Encoding")
    #expect(headers[.vary] == "Accept, Accept-Encoding")
    headers.addVary("Accept-Encoding")
    #expect(headers[.vary] == "Accept, Accept-Encoding")
    // CORS's Origin joins the same one field (some caches read only the first Vary line).
    headers.addVary("Origin")
    #expect(headers[values: .vary] == ["Accept, Accept-Encoding, Origin"])
    var empty = HTTPFields()
    empty.addVary("Origin")
    #expect(empty[values: .vary] == ["Origin"])
  }
}
