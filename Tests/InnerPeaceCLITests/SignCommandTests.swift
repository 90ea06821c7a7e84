import Foundation
import Testing

/// `innerpeace sign URL`, run as a user runs it.
@Suite(.tags(.process, .binary)) struct SignCommandTests {
  static let key = "0123456789abcdef0123456789abcdef-test-key"
  /// HMAC-SHA256 of `/card.png?kid=7f6ee6c0&preset=og&text=Hello%20world` with ``key``, by
  /// Python's `hmac`; `7f6ee6c0` is the key's ID, `hashlib.sha256(key).hexdigest()[:8]`.
  static let signature = "kid=7f6ee6c0&signature=uJAv5MTedWnFUL9d8VPfxSQO4i3T_tXnvaJ_7TpQrtY"

  @Test func signsAFullURLOrAPath() throws {
    let full = try CLI.run(
      ["sign", "https://cards.example.com/card.png?text=Hello%20world&preset=og"],
      environment: ["INNERPEACE_SIGNING_KEY": Self.key])
    #expect(full.status == 0, "\(full.stderr)")
    #expect(
      String(decoding: full.stdout, as: UTF8.self)
        == "https://cards.example.com/card.png?text=Hello%20world&preset=og&\(Self.signature)\n")
    // From a key file; an old signature is replaced.
    try withKeyFile { file in
      let path = try CLI.run(["sign", "/card.png?preset=og&text=Hello+world&signature=old", "--signing-key-file", file])
      #expect(path.status == 0, "\(path.stderr)")
      #expect(
        String(decoding: path.stdout, as: UTF8.self)
          == "/card.png?preset=og&text=Hello+world&\(Self.signature)\n")
    }
  }

  @Test func refusesWithoutAGoodKey() throws {
    let none = try CLI.run(["sign", "/card.png?text=hi"], environment: ["INNERPEACE_SIGNING_KEY": ""])
    #expect(none.status == 64)
    #expect(none.stderrLines.count == 1 && none.stderr.contains("at least 32"), "\(none.stderr)")
    let missing = try CLI.run(["sign", "/card.png", "--signing-key-file", "/nonexistent/key"])
    #expect(missing.status == 64)
    #expect(missing.stderrLines.count == 1, "\(missing.stderr)")
    let notAURL = try CLI.run(["sign", "card.png"], environment: ["INNERPEACE_SIGNING_KEY": Self.key])
    #expect(notAURL.status == 64)
    #expect(notAURL.stdout.isEmpty)
  }

  // MARK: Keys are bytes

  /// A binary key: not UTF-8 (0xFF, 0xFE, a lone continuation byte, a cut sequence), with white
  /// space around it that does not count.
  static let binaryKey: [UInt8] =
    [0x20, 0x09] + [0xFF, 0xFE, 0x80, 0xC3, 0x28, 0xE2, 0x82] + (0..<33).map { UInt8(($0 * 37 + 11) & 0xFF) | 0x80 }
    + [0x0D, 0x0A]

  /// Python: /usr/bin/python3, else python3 on the PATH (the standard library only).
  static func python() throws -> [String] {
    for candidate in [["/usr/bin/python3"], ["/usr/bin/env", "python3"]]
    where FileManager.default.isExecutableFile(atPath: candidate[0]) {
      if (try? ExternalTool.run(candidate[0], Array(candidate.dropFirst()) + ["-c", "pass"]))?.status == 0 {
        return candidate
      }
    }
    throw NoPython()
  }

  struct NoPython: Error, CustomStringConvertible {
    var description: String { "no python3: tried /usr/bin/python3 and python3 on the PATH" }
  }

  /// The README's Python signer (the python block of "Signed URLs"), as written there.
  static func readmeSigner() throws -> String {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.range(of: "### Signed URLs"), "README.md has no Signed URLs section")
    let rest = readme[section.upperBound...]
    let start = try #require(rest.range(of: "```python\n"), "no python block in Signed URLs")
    let end = try #require(rest[start.upperBound...].range(of: "```"))
    let code = String(rest[start.upperBound..<end.lowerBound])
    #expect(code.contains("def load_key(") && code.contains("def sign("), "\(code)")
    return code
  }

  /// The README's Python, given a key file of binary bytes (invalid UTF-8), signs exactly as
  /// `innerpeace sign` does; so does the same key given as `INNERPEACE_SIGNING_KEY=base64:...`.
  /// Before, the key file was read as UTF-8 with replacement characters, and they disagreed.
  @Test func readmePythonSignerAgreesOnABinaryKey() throws {
    let python = try Self.python()
    try withTemporaryFolder("innerpeace-sign") { folder in
      let keyFile = folder.appendingPathComponent("key.bin")
      try Data(Self.binaryKey).write(to: keyFile)
      let script = folder.appendingPathComponent("sign.py")
      let driver = """

        import sys
        print(sign(load_key(sys.argv[1]), "/card.png", {"text": "Grüße, world & more", "preset": "og", "w": "800"}))
        """
      try Data((try Self.readmeSigner() + driver).utf8).write(to: script)
      let signed = try ExternalTool.run(python[0], Array(python.dropFirst()) + [script.path, keyFile.path])
      #expect(signed.status == 0, "\(signed.stderr)")
      let pythonURL = String(decoding: signed.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
      let unsigned = try #require(pythonURL.range(of: "&signature=")).lowerBound
      let url = String(pythonURL[..<unsigned])

      let fromFile = try CLI.run(["sign", url, "--signing-key-file", keyFile.path])
      #expect(fromFile.status == 0, "\(fromFile.stderr)")
      #expect(String(decoding: fromFile.stdout, as: UTF8.self) == pythonURL + "\n")

      let encoded = Data(Self.binaryKey).base64EncodedString()
      let fromVariable = try CLI.run(["sign", url], environment: ["INNERPEACE_SIGNING_KEY": "base64:" + encoded])
      #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
      #expect(String(decoding: fromVariable.stdout, as: UTF8.self) == pythonURL + "\n")
    }
  }

  /// Two binary keys that differ only in bytes that are not UTF-8 sign differently (before, both
  /// became the same replacement characters), and 11 bytes are 11 bytes, under the minimum (before,
  /// 11 bytes of 0xFF were 33 bytes of U+FFFD and passed).
  @Test func binaryKeysAreTheirBytes() throws {
    try withTemporaryFolder("innerpeace-sign") { folder in
      func sign(_ key: [UInt8]) throws -> CommandResult {
        let file = folder.appendingPathComponent("key-\(UUID().uuidString)")
        try Data(key).write(to: file)
        return try CLI.run(["sign", "/card.png?text=hi", "--signing-key-file", file.path])
      }
      let first = try sign([UInt8](repeating: 0xFF, count: 40))
      let second = try sign([UInt8](repeating: 0xFE, count: 40))
      #expect(first.status == 0 && second.status == 0, "\(first.stderr) \(second.stderr)")
      #expect(first.stdout != second.stdout, "two keys gave one signature")
      let short = try sign([UInt8](repeating: 0xFF, count: 11) + [0x0A])
      #expect(short.status == 64)
      #expect(short.stderrLines.count == 1 && short.stderr.contains("11 bytes"), "\(short.stderr)")
      let notBase64 = try CLI.run(["sign", "/card.png"], environment: ["INNERPEACE_SIGNING_KEY": "base64:not base64!"])
      #expect(notBase64.status == 64)
      #expect(notBase64.stderrLines.count == 1 && notBase64.stderr.contains("base64"), "\(notBase64.stderr)")
    }
  }

  /// `--expires-in` and `--expires-at` add `expires` (covered by the signature, as the README's
  /// Python does it); `--key-id` picks one of several keys, each named by `KEYID=PATH` or by its
  /// derived ID; bad values are one line and exit 64.
  @Test func expiryAndKeyIDs() throws {
    let python = try Self.python()
    try withTemporaryFolder("innerpeace-sign") { folder in
      let keyFile = folder.appendingPathComponent("key.txt")
      try Data((Self.key + "\n").utf8).write(to: keyFile)
      let otherFile = folder.appendingPathComponent("other.txt")
      try Data(String(repeating: "o", count: 40).utf8).write(to: otherFile)
      let script = folder.appendingPathComponent("sign.py")
      let driver = """

        import sys
        print(sign(load_key(sys.argv[1]), "/card.png", {"text": "Hello world"}, expires_in=7 * 86400))
        """
      try Data((try Self.readmeSigner() + driver).utf8).write(to: script)
      let signed = try ExternalTool.run(python[0], Array(python.dropFirst()) + [script.path, keyFile.path])
      #expect(signed.status == 0, "\(signed.stderr)")
      let pythonURL = String(decoding: signed.stdout, as: UTF8.self).trimmingCharacters(in: .newlines)
      let expires = try #require(
        pythonURL.split(separator: "&").first { $0.hasPrefix("expires=") }.map { String($0.dropFirst(8)) })
      let fromSwift = try CLI.run(
        ["sign", "/card.png?text=Hello+world", "--signing-key-file", keyFile.path, "--expires-at", expires])
      #expect(String(decoding: fromSwift.stdout, as: UTF8.self) == pythonURL + "\n", "\(fromSwift.stderr)")

      // --expires-in: now plus 7 days, between the clock read before and after the run.
      let before = Int(Date().timeIntervalSince1970)
      let week = try CLI.run(["sign", "/card.png?text=hi", "--signing-key-file", keyFile.path, "--expires-in", "7d"])
      let after = Int(Date().timeIntervalSince1970)
      let weekURL = String(decoding: week.stdout, as: UTF8.self)
      let weekExpires = try #require(
        weekURL.split(separator: "&").first { $0.hasPrefix("expires=") }.flatMap { Int($0.dropFirst(8)) }, "\(weekURL)")
      #expect((before + 604_800...after + 604_800).contains(weekExpires))

      // Two keys: the first signs; --key-id picks by ID, given or derived.
      let keys = ["--signing-key-file", "2026-11=\(otherFile.path)", "--signing-key-file", keyFile.path]
      let first = try CLI.run(["sign", "/card.png?text=hi"] + keys)
      #expect(String(decoding: first.stdout, as: UTF8.self).contains("kid=2026-11&"), "\(first.stderr)")
      let chosen = try CLI.run(["sign", "/card.png?text=hi", "--key-id", "7f6ee6c0"] + keys)
      #expect(String(decoding: chosen.stdout, as: UTF8.self).contains("kid=7f6ee6c0&"), "\(chosen.stderr)")

      for bad in [
        ["--expires-in", "7w"], ["--expires-in", "-1d"], ["--expires-in", "d"], ["--expires-in", "99999999d"],
        ["--expires-at", "-5"], ["--expires-at", "1", "--expires-in", "1d"], ["--key-id", "nobody"],
        ["--signing-key-file", "a b=\(keyFile.path)"], ["--signing-key-file", "2026-11=\(keyFile.path)"],
      ] {
        let refused = try CLI.run(["sign", "/card.png?text=hi"] + keys + bad)
        #expect(refused.status == 64, "\(bad): \(refused.stderr)")
        #expect(refused.stderrLines.count == 1, "\(bad): \(refused.stderr)")
      }
    }
  }

  private func withKeyFile(_ body: (String) throws -> Void) throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-key-\(UUID().uuidString)")
    try Data((Self.key + "\n").utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    try body(file.path)
  }
}
