import Foundation
import InnerPeace
import Testing

/// The manifest's checksums: FIPS 180-4 vectors, streaming, and agreement with `sha256sum`.
@Suite("SHA-256")
struct SHA256Tests {
  static func hex(_ text: String) -> String { SHA256.hex(of: Array(text.utf8)) }

  @Test func knownVectors() {
    #expect(Self.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(Self.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      Self.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      Self.hex(
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
      ) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    #expect(
      Self.hex("The quick brown fox jumps over the lazy dog")
        == "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592")
  }

  @Test func aMillionAs() {
    let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
    #expect(SHA256.hex(of: million) == expected)
    // The same, fed in uneven pieces.
    var hash = SHA256()
    var offset = 0
    var piece = 1
    while offset < million.count {
      let end = min(million.count, offset + piece)
      hash.update(million[offset..<end])
      offset = end
      piece = piece * 7 % 997 + 1
    }
    #expect(hash.finalizeHex() == expected)
  }

  @Test func streamingEqualsOneShotAtEveryBlockBoundary() {
    let data = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 300] {
      let message = Array(data.prefix(length))
      let oneShot = SHA256.hex(of: message)
      #expect(oneShot.count == 64 && oneShot.allSatisfy { "0123456789abcdef".contains($0) })
      for split in Set([0, 1, length / 2, max(0, length - 1), length]) where split <= length {
        var hash = SHA256()
        hash.update(message[0..<split])
        hash.update(message[split..<length])
        #expect(hash.finalizeHex() == oneShot, "length \(length) split at \(split)")
      }
    }
  }

  /// `sha256sum` (coreutils) or `shasum -a 256` (macOS), whichever is installed.
  static func systemDigests(of files: [URL]) throws -> [String: String] {
    let candidates: [(String, [String])] = [
      ("/usr/bin/sha256sum", []), ("/bin/sha256sum", []), ("/usr/bin/shasum", ["-a", "256"]),
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.0) }) else {
      Issue.record("neither sha256sum nor shasum is installed")
      return [:]
    }
    let (tool, options) = found
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = options + files.map(\.path)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(tool) failed")
    var digests: [String: String] = [:]
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(separator: " ", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let path = parts[1].hasPrefix("*") || parts[1].hasPrefix(" ") ? String(parts[1].dropFirst()) : String(parts[1])
      digests[path] = String(parts[0])
    }
    return digests
  }

  @Test func agreesWithSha256sumOnRenderedFilesAndOddLengths() throws {
    try withTemporaryFolder("innerpeace-sha256") { folder in
      var files: [URL: [UInt8]] = [:]
      for format in [ImageFormat.png, .jpeg] {
        let card = try Fixtures.renderer.render(
          CardRequest(
            preset: .custom(try CanvasSize(width: 320, height: 200)), quote: .index(3), picture: .named("dune.jpg"),
            seed: 4, format: format))
        let url = folder.appendingPathComponent("card.\(format.fileExtension)")
        try Data(card.bytes).write(to: url)
        files[url] = card.bytes
      }
      for length in [55, 56, 64, 65, 1000, 4097] {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ length) }
        let url = folder.appendingPathComponent("data-\(length).bin")
        try Data(bytes).write(to: url)
        files[url] = bytes
      }
      let digests = try Self.systemDigests(of: Array(files.keys))
      #expect(digests.count == files.count, "the system tool reported \(digests.count) of \(files.count) files")
      for (url, bytes) in files {
        #expect(SHA256.hex(of: bytes) == digests[url.path], "\(url.lastPathComponent)")
      }
    }
  }
}
