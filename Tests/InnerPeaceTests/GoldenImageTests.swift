import Foundation
import InnerPeace
import Testing

/// Golden images: a fixed card per preset, compared pixel by pixel (with a tolerance for
/// rasteriser differences between machines) against PNGs committed in `Golden/`.
///
/// To record them again after an intended change to the look of a card, run
/// `INNERPEACE_RECORD_GOLDEN=1 swift test --filter GoldenImageTests`: the goldens are written
/// into the source tree (Tests/InnerPeaceTests/Golden/) instead of compared. Review and commit them.
@Suite("Golden images")
struct GoldenImageTests {
  struct Golden: Sendable, CustomTestStringConvertible {
    let name: String
    let request: CardRequest
    /// Box-downscale factor applied before storing and comparing (keeps the repository small).
    let downscale: Int

    var testDescription: String { name }
    var fileName: String { "\(name).png" }
  }

  static let goldens: [Golden] = [
    Golden(
      name: "classic",
      request: CardRequest(preset: .classic, quote: .index(1), picture: .named("green-meadow.jpg"), seed: 1),
      downscale: 2),
    Golden(
      name: "og",
      request: CardRequest(preset: .og, quote: .index(0), picture: .named("lady-bird.jpg"), seed: 1),
      downscale: 1),
  ]

  /// Mean absolute difference per channel must stay below this...
  static let maximumMeanDifference = 1.0
  /// ...and at most this share of pixels may differ by more than ``largeDifference`` in a channel.
  static let maximumLargeDifferenceShare = 0.005
  static let largeDifference = 32

  static var recording: Bool { ProcessInfo.processInfo.environment["INNERPEACE_RECORD_GOLDEN"] == "1" }

  /// The Golden folder in the source tree (for recording).
  static var sourceFolder: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden", isDirectory: true)
  }

  struct Difference: CustomStringConvertible {
    var meanPerChannel: [Double]
    var largeShare: Double
    var maximum: Int

    var passes: Bool {
      meanPerChannel.allSatisfy { $0 < GoldenImageTests.maximumMeanDifference }
        && largeShare < GoldenImageTests.maximumLargeDifferenceShare
    }

    var description: String {
      let means = meanPerChannel.map { String(format: "%.3f", $0) }.joined(separator: "/")
      return
        "mean |Δ| R/G/B \(means), \(String(format: "%.3f", largeShare * 100)) % of pixels off by > \(GoldenImageTests.largeDifference), max \(maximum)"
    }
  }

  static func compare(_ actual: DecodedImage, _ expected: DecodedImage) -> Difference {
    precondition(actual.width == expected.width && actual.height == expected.height)
    var sums = [0, 0, 0]
    var large = 0
    var maximum = 0
    let count = actual.width * actual.height
    actual.rgba.withUnsafeBufferPointer { a in
      expected.rgba.withUnsafeBufferPointer { e in
        for i in 0..<count {
          var pixelMax = 0
          for c in 0..<3 {
            let d = abs(Int(a[4 * i + c]) - Int(e[4 * i + c]))
            sums[c] += d
            pixelMax = max(pixelMax, d)
          }
          if pixelMax > largeDifference { large += 1 }
          maximum = max(maximum, pixelMax)
        }
      }
    }
    return Difference(
      meanPerChannel: sums.map { Double($0) / Double(count) }, largeShare: Double(large) / Double(count),
      maximum: maximum)
  }

  static func renderForGolden(_ golden: Golden) throws -> DecodedImage {
    let card = try Fixtures.renderer.render(golden.request)
    let image = try PNGCodec.decode(card.bytes)
    #expect(image.width == golden.request.preset.size.width && image.height == golden.request.preset.size.height)
    return image.downscaled(by: golden.downscale)
  }

  @Test(arguments: goldens)
  func matchesGolden(_ golden: Golden) throws {
    let actual = try Self.renderForGolden(golden)
    if Self.recording {
      try FileManager.default.createDirectory(at: Self.sourceFolder, withIntermediateDirectories: true)
      let file = Self.sourceFolder.appendingPathComponent(golden.fileName)
      try PNGCodec.writeRGB(actual, to: file)
      // Read back what was written: the stored golden must round-trip exactly (RGB, 8-bit).
      let stored = try PNGCodec.decode(file: file)
      #expect(Self.compare(stored, actual).maximum == 0)
      print("recorded golden \(file.path)")
      return
    }
    let url = try #require(
      Bundle.module.url(forResource: golden.name, withExtension: "png", subdirectory: "Golden"),
      "Golden/\(golden.fileName) is missing: record it with INNERPEACE_RECORD_GOLDEN=1 swift test --filter GoldenImageTests"
    )
    let expected = try PNGCodec.decode(file: url)
    try #require(
      expected.width == actual.width && expected.height == actual.height,
      "golden is \(expected.width)x\(expected.height), the render \(actual.width)x\(actual.height)")
    let difference = Self.compare(actual, expected)
    if !difference.passes {
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "innerpeace-golden-failures-\(UUID().uuidString)")
      try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      let file = folder.appendingPathComponent("\(golden.name)-actual.png")
      try? PNGCodec.writeRGB(actual, to: file)
      Issue.record(
        "\(golden.name) differs from its golden: \(difference). The render is at \(file.path); if the change is intended, re-record with INNERPEACE_RECORD_GOLDEN=1."
      )
    }
  }

  /// The comparison is not vacuous: a different quote on the same picture fails it.
  @Test func toleranceCatchesADifferentCard() throws {
    guard !Self.recording else { return }
    let golden = Self.goldens[1]
    let url = try #require(Bundle.module.url(forResource: golden.name, withExtension: "png", subdirectory: "Golden"))
    let expected = try PNGCodec.decode(file: url)
    var other = golden.request
    other.quote = .index(1)
    let actual = try PNGCodec.decode(try Fixtures.renderer.render(other).bytes).downscaled(by: golden.downscale)
    let difference = Self.compare(actual, expected)
    #expect(!difference.passes, "a different quote still matches the golden: \(difference)")
  }

  @Test func goldensAreSmallRGBFiles() throws {
    guard !Self.recording else { return }
    for golden in Self.goldens {
      let url = try #require(Bundle.module.url(forResource: golden.name, withExtension: "png", subdirectory: "Golden"))
      let bytes = [UInt8](try Data(contentsOf: url))
      let header = try #require(PNGHeader(bytes))
      #expect(header.colourType == 2, "\(golden.name): goldens are stored as RGB")
      #expect(header.width == golden.request.preset.size.width / golden.downscale)
      #expect(bytes.count < 2_000_000, "\(golden.name) golden is \(bytes.count) bytes")
    }
  }
}
