import Foundation
import InnerPeaceServer
import Testing

/// The URL signature: HMAC-SHA256 over the path and the canonical query, base64url.
@Suite struct URLSignerTests {
  static let key = "0123456789abcdef0123456789abcdef-test-key"

  /// Computed apart from this code, with Python's standard library:
  /// `base64.urlsafe_b64encode(hmac.new(key, b"/card.png?preset=og&text=Hello%20world",
  /// hashlib.sha256).digest()).rstrip(b"=")`.
  static let knownSignature = "kTQ_qMxjRzF3W6PCBQ6n_VclkD2H2NmNgyHZQRxDHuQ"

  @Test func matchesAnIndependentHMAC() throws {
    let signer = try URLSigner(key: Self.key)
    let parameters = [(name: "text", value: "Hello world"), (name: "preset", value: "og")]
    #expect(signer.signature(path: "/card.png", parameters: parameters) == Self.knownSignature)
    #expect(signer.keyID == Self.keyID)
    #expect(
      signer.sign("/card.png?text=Hello%20world&preset=og")
        == "/card.png?text=Hello%20world&preset=og&kid=\(Self.keyID)&signature=\(Self.signatureWithKeyID)")
    #expect(
      signer.sign("/card.png?text=Hello%20world&preset=og", expires: 1_795_737_600)
        == "/card.png?text=Hello%20world&preset=og&kid=\(Self.keyID)&expires=1795737600"
        + "&signature=\(Self.signatureWithExpiry)")
  }

  /// `hashlib.sha256(key).hexdigest()[:8]`, by Python.
  static let keyID = "7f6ee6c0"
  /// By Python's `hmac`, of `/card.png?kid=7f6ee6c0&preset=og&text=Hello%20world`.
  static let signatureWithKeyID = "uJAv5MTedWnFUL9d8VPfxSQO4i3T_tXnvaJ_7TpQrtY"
  /// By Python's `hmac`, of `/card.png?expires=1795737600&kid=7f6ee6c0&preset=og&text=Hello%20world`.
  static let signatureWithExpiry = "fdN0Jg5o8MapK_0LBmwFJSedIgFS968w2szJ8B5-inc"

  /// The order and the escaping of the parameters do not matter; an old signature is replaced.
  @Test func canonicalQuery() throws {
    let signer = try URLSigner(key: Self.key)
    for url in [
      "/card.png?preset=og&text=Hello+world", "/card.png?preset=%6Fg&text=Hello%20world&signature=old",
      "/card.png?kid=old&preset=og&text=Hello%20world",
    ] {
      let signed = try #require(signer.sign(url))
      #expect(signed.hasSuffix("kid=\(Self.keyID)&signature=\(Self.signatureWithKeyID)"), "\(url) -> \(signed)")
      #expect(!signed.contains("signature=old") && !signed.contains("kid=old"))
    }
  }

  /// Any change of the path, a value or the parameters breaks the signature; a valid one passes.
  @Test func anyChangeBreaksIt() throws {
    let signer = try URLSigner(key: Self.key)
    let parameters = [(name: "text", value: "Hello world"), (name: "preset", value: "og")]
    #expect(signer.isValid(signature: Self.knownSignature, path: "/card.png", parameters: parameters))
    #expect(!signer.isValid(signature: Self.knownSignature, path: "/card.webp", parameters: parameters))
    #expect(
      !signer.isValid(
        signature: Self.knownSignature, path: "/card.png",
        parameters: [(name: "text", value: "Hello World"), (name: "preset", value: "og")]))
    #expect(
      !signer.isValid(
        signature: Self.knownSignature, path: "/card.png", parameters: parameters + [(name: "author", value: "false")]))
    #expect(!signer.isValid(signature: Self.knownSignature, path: "/card.png", parameters: [parameters[0]]))
    let other = try URLSigner(key: Self.key + "!")
    #expect(!other.isValid(signature: Self.knownSignature, path: "/card.png", parameters: parameters))
    for bad in [
      "", "abc", String(Self.knownSignature.dropLast()), Self.knownSignature + "A",
      "!" + Self.knownSignature.dropFirst(),
    ] {
      #expect(!signer.isValid(signature: bad, path: "/card.png", parameters: parameters), "\(bad)")
    }
  }

  /// A signature has one spelling: its last character carries 4 bits of the 32 bytes, and the
  /// three characters that differ from it only in the 2 unused bits are refused (before, all four
  /// decoded to the same bytes and passed).
  @Test func onlyTheCanonicalSpellingIsAccepted() throws {
    let signer = try URLSigner(key: Self.key)
    let parameters = [(name: "text", value: "Hello world"), (name: "preset", value: "og")]
    #expect(Self.knownSignature.hasSuffix("Q"))
    #expect(signer.isValid(signature: Self.knownSignature, path: "/card.png", parameters: parameters))
    for last in ["R", "S", "T"] {
      let variant = String(Self.knownSignature.dropLast()) + last
      #expect(!signer.isValid(signature: variant, path: "/card.png", parameters: parameters), "\(variant)")
    }
    #expect(!signer.isValid(signature: Self.knownSignature + "=", path: "/card.png", parameters: parameters))
  }

  /// The key is bytes: the text's UTF-8 bytes, or bytes as given, surrounding ASCII white space
  /// removed and nothing else; the minimum is counted in bytes.
  @Test func keysAreBytes() throws {
    let parameters = [(name: "text", value: "Hello world"), (name: "preset", value: "og")]
    let text = try URLSigner(key: Self.key).signature(path: "/card.png", parameters: parameters)
    let bytes = try URLSigner(key: [0x20, 0x0B, 0x0C] + Array(Self.key.utf8) + [0x0D, 0x0A, 0x09])
    #expect(bytes.signature(path: "/card.png", parameters: parameters) == text)
    let binary = try URLSigner(key: [UInt8](repeating: 0xFF, count: 32))
    let other = try URLSigner(key: [UInt8](repeating: 0xFE, count: 32))
    #expect(
      binary.signature(path: "/card.png", parameters: parameters)
        != other.signature(path: "/card.png", parameters: parameters))
    #expect(throws: URLSigner.KeyError.tooShort(bytes: 11)) { try URLSigner(key: [UInt8](repeating: 0xFF, count: 11)) }
    // U+00A0 is not ASCII white space: it is two bytes of the key.
    #expect(throws: URLSigner.KeyError.tooShort(bytes: 31)) {
      try URLSigner(key: "\u{A0}" + String(repeating: "k", count: 29))
    }
  }

  @Test func shortKeysAreRefused() {
    #expect(throws: URLSigner.KeyError.tooShort(bytes: 31)) { try URLSigner(key: String(repeating: "k", count: 31)) }
    #expect(throws: URLSigner.KeyError.tooShort(bytes: 0)) { try URLSigner(key: "  \n") }
    #expect(throws: Never.self) { try URLSigner(key: String(repeating: "k", count: 32) + "\n") }
  }
}

/// A server with a key: custom text only with a valid signature, every image with
/// `signsAllImages`, 403 with the JSON error body otherwise, and the links it hands out signed.
@Suite struct SignedEndpointTests {
  static func configuration(all: Bool) throws -> ServerConfiguration {
    var configuration = testConfiguration()
    configuration.urlSigner = try URLSigner(key: URLSignerTests.key)
    configuration.signsAllImages = all
    configuration.publicURL = "https://cards.example.com"
    return configuration
  }

  @Test func customTextNeedsAValidSignature() async throws {
    let signer = try URLSigner(key: URLSignerTests.key)
    try await withRouter(configuration: try Self.configuration(all: false)) { client, _ in
      let url = "/card.png?text=Hello%20world&w=240&h=200"
      expectError(try await client.get(url), status: 403, parameter: "signature")
      let signed = try #require(signer.sign(url))
      expectCard(try await client.get(signed), format: "png", size: (240, 200))
      // Tampered: another text under the same signature; a wrong signature; a parameter added.
      let signature = try #require(queryItems(of: signed)["signature"])
      expectError(
        try await client.get("/card.png?text=Hello%20World&w=240&h=200&signature=\(signature)"), status: 403,
        parameter: "signature")
      expectError(try await client.get(url + "&signature=\(URLSignerTests.knownSignature)"), status: 403)
      expectError(try await client.get(signed + "&author=false"), status: 403)
      expectError(try await client.get(url + "&signature=x"), status: 403)
      // Catalog cards need none without signsAllImages.
      #expect(try await client.get("/cards/0.png?w=240&h=200").status == 200)
      #expect(try await client.get("/").status == 200)
    }
  }

  @Test func everyImageWhenAllMustBeSigned() async throws {
    let signer = try URLSigner(key: URLSignerTests.key)
    try await withRouter(configuration: try Self.configuration(all: true)) { client, _ in
      for url in [
        "/cards/0.png?w=240&h=200", "/random.jpg?w=240&h=200&seed=1", "/today.webp?w=240&h=200", "/random?w=240&h=200",
      ] {
        expectError(try await client.get(url), status: 403, parameter: "signature")
        #expect(try await client.get(try #require(signer.sign(url))).status == 200, "\(url)")
      }
      // The links the service hands out are signed and work as they are.
      let quotes = try await client.get("/quotes")
      let items = try #require(quotes.json as? [[String: Any]])
      let imageURL = try #require(items.first?["imageURL"] as? String)
      #expect(queryItems(of: imageURL)["signature"] != nil, "\(imageURL)")
      #expect(try await client.get(relativeURL(imageURL)).status == 200)
      let random = try await client.get(try #require(signer.sign("/random.png?w=240&h=200&seed=3")))
      let location = try #require(random.header("Content-Location"))
      #expect(try await client.get(relativeURL(location)).status == 200, "\(location)")
      // JSON, feeds and the document need no signature; the page, which asks for cards of any
      // size, is off.
      #expect(try await client.get("/quotes/0").status == 200)
      #expect(try await client.get("/openapi.yaml").status == 200)
      expectError(try await client.get("/"), status: 404)
    }
  }
}
