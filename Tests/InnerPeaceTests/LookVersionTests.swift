import Foundation
import Testing

@testable import InnerPeace

/// The look version guards the service's immutable URLs: they carry a content version that folds
/// in ``CardRenderer/lookVersion``, so a change to the cards' look must bump it, or caches keep
/// the old cards for a year. The golden images are the witness: `Golden/look.json` records the
/// look version with a fingerprint of each golden, and this test fails when the goldens change
/// while the version does not (or the version changes while the goldens do not).
///
/// After an intended change to the look: bump `CardRenderer.lookVersion`, record the goldens
/// (`INNERPEACE_RECORD_GOLDEN=1`, see ``GoldenImageTests``), then run this test with
/// `INNERPEACE_RECORD_LOOK=1`, which writes `look.json`, and only when the version was bumped.
@Suite struct LookVersionTests {
  struct Manifest: Codable, Equatable {
    var lookVersion: Int
    /// File name → "bytes FNV-1a-64 hex".
    var goldens: [String: String]
  }

  static var folder: URL { GoldenImageTests.sourceFolder }
  static var manifestURL: URL { folder.appendingPathComponent("look.json") }

  /// The goldens as they are now: each file's size and FNV-1a-64 of its bytes.
  static func currentGoldens() throws -> [String: String] {
    var result: [String: String] = [:]
    for golden in GoldenImageTests.goldens {
      let bytes = try Data(contentsOf: folder.appendingPathComponent(golden.fileName))
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325
      for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
      }
      result[golden.fileName] = "\(bytes.count) \(String(hash, radix: 16))"
    }
    return result
  }

  @Test func goldensChangeOnlyWithTheLookVersion() throws {
    let recorded = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: Self.manifestURL))
    let current = Manifest(lookVersion: CardRenderer.lookVersion, goldens: try Self.currentGoldens())
    if ProcessInfo.processInfo.environment["INNERPEACE_RECORD_LOOK"] == "1" {
      #expect(
        current.goldens == recorded.goldens || current.lookVersion > recorded.lookVersion,
        "the goldens changed: bump CardRenderer.lookVersion (now \(current.lookVersion)) before recording")
      guard current.goldens == recorded.goldens || current.lookVersion > recorded.lookVersion else { return }
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      try (encoder.encode(current) + Data("\n".utf8)).write(to: Self.manifestURL)
      return
    }
    #expect(
      current.goldens == recorded.goldens,
      """
      the golden images changed but look.json was not recorded: if the look changed on purpose, bump \
      CardRenderer.lookVersion (now \(current.lookVersion)) and run with INNERPEACE_RECORD_LOOK=1
      """)
    #expect(
      current.lookVersion == recorded.lookVersion,
      "CardRenderer.lookVersion is \(current.lookVersion) but look.json records \(recorded.lookVersion): record it")
  }

  /// The content a service versions includes the bundled font file, the fonts each face of a card
  /// resolves to (the fallback faces), and every picture's file.
  @Test func contentSourcesNameTheFontsAndPhotos() throws {
    let renderer = try CardRenderer(catalog: try Catalog.bundled())
    let sources = renderer.contentSources
    #expect(sources.lookVersion == CardRenderer.lookVersion)
    #expect(sources.bundledFontFiles.map(\.lastPathComponent) == ["EBGaramond12-Italic.otf"])
    let faces = Dictionary(uniqueKeysWithValues: sources.fallbackFontFiles.map { ($0.face, $0.files) })
    #expect(faces["bundled"]?.first?.path == renderer.bundledFontPath, "the bundled file comes first for its family")
    #expect(
      faces["cjkSC"]?.first?.lastPathComponent.hasPrefix("NotoSerifCJK") == true, "the CJK face resolves to its file")
    // Trimmed: a font that adds no character is not there, so the lists are far shorter than
    // everything installed; and no face lists a file twice.
    for (face, files) in faces { #expect(Set(files).count == files.count, "\(face)") }
    #expect(sources.pictureFiles.map(\.name) == renderer.catalog.pictures)
    for (_, file) in sources.pictureFiles { #expect(FileManager.default.fileExists(atPath: file.path)) }
  }

  /// The picture of each quote is part of what is versioned: a change of the rule changes every
  /// card URL that relies on it.
  @Test func contentSourcesCarryThePictureOfEachQuote() throws {
    let catalog = try Catalog.bundled()
    let sources = ContentSources(catalog: catalog)
    #expect(sources.quotePictures.count == catalog.quotes.count)
    for (index, picture) in sources.quotePictures.enumerated() {
      #expect(picture == catalog.pictures[index % catalog.pictures.count], "quote \(index)")
    }
  }

  /// The core computes the content version: 12 hex digits of SHA-256, the same for the same
  /// content, and another when a photo's bytes change under the same name (same size).
  @Test func theContentVersionIsComputedInTheCore() throws {
    // SHA-256 (FIPS 180-2's test vectors) through GLib's checksum.
    let abc = SHA256Checksum()
    abc.update(Array("abc".utf8))
    #expect(abc.hexDigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    let split = SHA256Checksum()
    split.update(Array("a".utf8))
    split.update(Array("bc".utf8))
    #expect(split.hexDigest() == abc.hexDigest(), "updates add up to one input")
    #expect(SHA256Checksum().hexDigest() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

    try PictureTests.withCatalog(files: ["photo.jpg": try bundledPhotoBytes()]) { folder in
      let catalog = try Catalog(directory: folder)
      let version = ContentSources(catalog: catalog).version()
      #expect(version.count == 12 && version.allSatisfy(\.isHexDigit), "\(version)")
      #expect(ContentSources(catalog: catalog).version() == version)
      var bytes = try bundledPhotoBytes()
      bytes[bytes.count / 2] ^= 0x01
      try folder.writeBytes(bytes, to: "photo.jpg")
      #expect(ContentSources(catalog: catalog).version() != version, "a photo's bytes changed, the version did not")
    }
  }
}
