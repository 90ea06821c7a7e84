import Foundation
import Testing

/// `innerpeace sign URL`, run as a user runs it.
@Suite struct SignCommandTests {
  static let key = "0123456789abcdef0123456789abcdef-test-key"
  /// HMAC-SHA256 of `/card.png?preset=og&text=Hello%20world` with ``key``, by Python's `hmac`.
  static let signature = "kTQ_qMxjRzF3W6PCBQ6n_VclkD2H2NmNgyHZQRxDHuQ"

  @Test func signsAFullURLOrAPath() throws {
    let full = try CLI.run(
      ["sign", "https://cards.example.com/card.png?text=Hello%20world&preset=og"],
      environment: ["INNERPEACE_SIGNING_KEY": Self.key])
    #expect(full.status == 0, "\(full.stderr)")
    #expect(
      String(decoding: full.stdout, as: UTF8.self)
        == "https://cards.example.com/card.png?text=Hello%20world&preset=og&signature=\(Self.signature)\n")
    // From a key file; an old signature is replaced.
    try withKeyFile { file in
      let path = try CLI.run(["sign", "/card.png?preset=og&text=Hello+world&signature=old", "--signing-key-file", file])
      #expect(path.status == 0, "\(path.stderr)")
      #expect(
        String(decoding: path.stdout, as: UTF8.self)
          == "/card.png?preset=og&text=Hello+world&signature=\(Self.signature)\n")
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

  private func withKeyFile(_ body: (String) throws -> Void) throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-key-\(UUID().uuidString)")
    try Data((Self.key + "\n").utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    try body(file.path)
  }
}
