import Foundation
import InnerPeaceServer
import NIOConcurrencyHelpers
import Testing

/// Several signing keys (the first signs, all verify), `kid` and `expires`, judged on a clock the
/// test sets.
@Suite struct SigningKeysTests {
  static let oldKey = try! URLSigner(key: URLSignerTests.key)
  static let newKey = try! URLSigner(key: String(repeating: "n", count: 40), keyID: "2026-11")
  static let strangerKey = try! URLSigner(key: String(repeating: "s", count: 40), keyID: "stranger")
  /// 2026-11-27T00:00:00Z.
  static let midnight = 1_795_737_600

  /// A clock the test moves.
  final class TestClock: Sendable {
    private let seconds: NIOLockedValueBox<Int>
    init(_ seconds: Int) { self.seconds = NIOLockedValueBox(seconds) }
    func set(_ value: Int) { seconds.withLockedValue { $0 = value } }
    var now: Date { Date(timeIntervalSince1970: TimeInterval(seconds.withLockedValue { $0 })) }
  }

  static func configuration(_ keys: [URLSigner], clock: TestClock) throws -> ServerConfiguration {
    var configuration = testConfiguration()
    configuration.signingKeys = try SigningKeys(keys)
    configuration.now = { clock.now }
    return configuration
  }

  /// Mid-rotation (new key first, old second): URLs of either key pass, with or without `kid`
  /// (URLs signed before key IDs had none), and the first key signs; a key the service does not
  /// have is a 403 naming `kid`. Before, a second key was impossible.
  @Test func rotationKeepsEveryKeyValid() async throws {
    let clock = TestClock(Self.midnight)
    let url = "/card.png?text=Hello%20world&w=240&h=200"
    try await withRouter(configuration: try Self.configuration([Self.newKey, Self.oldKey], clock: clock)) {
      client, _ in
      for key in [Self.newKey, Self.oldKey] {
        let signed = try #require(key.sign(url))
        #expect(queryItems(of: signed)["kid"] == key.keyID)
        expectCard(try await client.get(signed), format: "png", size: (240, 200))
      }
      // Signed before key IDs: no kid, checked against every key.
      let parameters = [(name: "text", value: "Hello world"), (name: "w", value: "240"), (name: "h", value: "200")]
      for key in [Self.newKey, Self.oldKey] {
        let legacy = url + "&signature=" + key.signature(path: "/card.png", parameters: parameters)
        #expect(try await client.get(legacy).status == 200, "\(key.keyID)")
      }
      let stranger = try #require(Self.strangerKey.sign(url))
      let error = expectError(try await client.get(stranger), status: 403, parameter: "kid")
      #expect((error["message"] as? String)?.contains("'stranger'") == true, "\(error)")
      // Another key's ID on this key's signature: the named key does not match.
      let relabelled = try #require(Self.oldKey.sign(url)).replacingOccurrences(
        of: "kid=\(Self.oldKey.keyID)", with: "kid=2026-11")
      expectError(try await client.get(relabelled), status: 403, parameter: "signature")
    }
  }

  /// `expires` is covered by the signature and judged on the configured clock: valid up to the
  /// second before, a 403 naming the expiry from that second on; moved, it no longer matches.
  @Test func expiredURLsAreRefused() async throws {
    let clock = TestClock(Self.midnight - 60)
    try await withRouter(configuration: try Self.configuration([Self.oldKey], clock: clock)) { client, _ in
      let signed = try #require(Self.oldKey.sign("/card.png?text=Soon&w=240&h=200", expires: Self.midnight))
      let first = try await client.get(signed)
      #expect(first.status == 200)
      // Cached no longer than it lives (a day without expires).
      #expect(first.header("Cache-Control") == "public, max-age=60", "\(first.headers)")
      clock.set(Self.midnight - 1)
      #expect(try await client.get(signed).header("Cache-Control") == "public, max-age=1")
      clock.set(Self.midnight)
      let error = expectError(try await client.get(signed), status: 403, parameter: "expires")
      #expect(error["message"] as? String == "signature expired at 2026-11-27T00:00:00Z", "\(error)")
      let extended = signed.replacingOccurrences(
        of: "expires=\(Self.midnight)", with: "expires=\(Self.midnight + 3600)")
      expectError(try await client.get(extended), status: 403, parameter: "signature")
    }
  }

  /// Hostile `kid` and `expires`: a 400 or 403 JSON naming the parameter, never a 500.
  @Test func hostileKeyIDsAndExpiries() async throws {
    let clock = TestClock(Self.midnight)
    try await withRouter(configuration: try Self.configuration([Self.oldKey], clock: clock)) { client, _ in
      let signed = try #require(Self.oldKey.sign("/card.png?text=Hi&w=240&h=200", expires: Self.midnight + 60))
      for expires in [
        "-1", "abc", "1e3", "0x10", "+5", " 5", "", "1.5", "99999999999999999999", "253402300800",
        String(repeating: "9", count: 5000),
      ] {
        let hostile = signed.replacingOccurrences(of: "expires=\(Self.midnight + 60)", with: "expires=\(expires)")
        expectError(try await client.get(hostile), status: 400, parameter: "expires")
      }
      expectError(try await client.get(signed + "&expires=1"), status: 400, parameter: "expires")
      let kidPart = "kid=\(Self.oldKey.keyID)"
      for kid in ["a%20b", "%00", "a/b", "", String(repeating: "k", count: 65), "%C3%A9"] {
        expectError(
          try await client.get(signed.replacingOccurrences(of: kidPart, with: "kid=\(kid)")), status: 400,
          parameter: "kid")
      }
      expectError(try await client.get(signed + "&kid=x"), status: 400, parameter: "kid")
      expectError(
        try await client.get(signed.replacingOccurrences(of: kidPart, with: "kid=nobody")), status: 403,
        parameter: "kid")
    }
  }

  @Test func cacheLifetimeIsCapped() {
    #expect(SigningKeys.cacheControl("public, max-age=31536000, immutable", expiringIn: 90) == "public, max-age=90")
    #expect(
      SigningKeys.cacheControl("public, max-age=60, s-maxage=600", expiringIn: 90) == "public, max-age=60, s-maxage=90")
    #expect(SigningKeys.cacheControl("no-store", expiringIn: 90) == "no-store")
    #expect(SigningKeys.cacheControl("private, max-age=300", expiringIn: -5) == "private, max-age=0")
  }

  @Test func keySetsAreChecked() throws {
    let keys = try SigningKeys([Self.newKey, Self.oldKey])
    #expect(keys.signing.keyID == "2026-11")
    var configuration = ServerConfiguration()
    configuration.signingKeys = keys
    #expect(configuration.urlSigner?.keyID == "2026-11")
    #expect(throws: SigningKeys.KeysError.none) { try SigningKeys([]) }
    let twin = try URLSigner(key: String(repeating: "t", count: 40), keyID: Self.oldKey.keyID)
    #expect(throws: SigningKeys.KeysError.duplicateKeyID(Self.oldKey.keyID)) {
      try SigningKeys([Self.oldKey, twin])
    }
    #expect(throws: URLSigner.KeyError.keyIDInvalid("a b")) {
      try URLSigner(key: String(repeating: "t", count: 40), keyID: "a b")
    }
  }

  /// The README's Python signer (the python block of "Signed URLs", as written there), with a
  /// key ID and an expiry, makes URLs this server accepts, until they expire.
  @Test func readmePythonSignerIsVerified() async throws {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.range(of: "### Signed URLs"))
    let rest = readme[section.upperBound...]
    let start = try #require(rest.range(of: "```python\n"))
    let end = try #require(rest[start.upperBound...].range(of: "```"))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-keys-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let keyFile = folder.appendingPathComponent("key.txt")
    try Data((String(repeating: "p", count: 48) + "\n").utf8).write(to: keyFile)
    let script = folder.appendingPathComponent("sign.py")
    let driver = """

      import sys
      key = load_key(sys.argv[1])
      print(sign(key, "/card.png", {"text": "Grüße & more", "w": "240", "h": "200"}, expires_in=3600))
      print(sign(key, "/card.png", {"text": "Named", "w": "240", "h": "200"}, kid="python"))
      """
    try Data((String(rest[start.upperBound..<end.lowerBound]) + driver).utf8).write(to: script)
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    python.arguments = [script.path, keyFile.path]
    let output = Pipe()
    python.standardOutput = output
    try python.run()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    python.waitUntilExit()
    #expect(python.terminationStatus == 0)
    let urls = printed.split(separator: "\n").map(String.init)
    try #require(urls.count == 2, "\(printed)")
    let expires = try #require(Int(queryItems(of: urls[0])["expires"] ?? ""), "\(urls[0])")

    let keyBytes = Array(try Data(contentsOf: keyFile))
    let clock = TestClock(expires - 1)
    let keys = [try URLSigner(key: keyBytes), try URLSigner(key: keyBytes, keyID: "python")]
    try await withRouter(configuration: try Self.configuration(keys, clock: clock)) { client, _ in
      expectCard(try await client.get(urls[0]), format: "png", size: (240, 200))
      expectCard(try await client.get(urls[1]), format: "png", size: (240, 200))
      clock.set(expires)
      expectError(try await client.get(urls[0]), status: 403, parameter: "expires")
      #expect(try await client.get(urls[1]).status == 200)
    }
  }
}
