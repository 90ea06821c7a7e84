import Foundation
import Testing

@testable import InnerPeace

/// White text keeps at least 4.5:1 WCAG contrast against the pixels just outside its glyphs, at
/// the 5th percentile, on every bundled photo at every preset.
///
/// The measure is written here, apart from the renderer's own estimate: the glyphs' coverage
/// comes from the halo stage (a test hook), "just outside" is every uncovered pixel within 1 to
/// 3 px (in x and y) of a covered one, and each such pixel's luminance is read from the finished
/// PNG. The quote and the author line are measured apart.
///
/// Set `INNERPEACE_CONTRAST_DIR` to a folder to keep every card measured, to look at them.
@Suite("Contrast")
struct ContrastTests {
  static let presets: [Preset] = [.classic, .og, .square, .story, .custom(try! CanvasSize(width: 400, height: 400))]

  /// The shortest and the longest catalog quote.
  static let quotes: [Int] = {
    let quotes = Fixtures.catalog.quotes
    let byLength = quotes.indices.sorted { quotes[$0].text.count < quotes[$1].text.count }
    return [byLength.first!, byLength.last!]
  }()

  /// The 5th percentile of the contrast against white of the ring around the quote's and the
  /// author's glyphs (`nil` for a line that is not there).
  struct Measure: CustomStringConvertible {
    var quote: Double
    var author: Double?
    var strengths: (HaloStrength, HaloStrength)
    var description: String {
      "quote \(String(format: "%.2f", quote)):1, author \(author.map { String(format: "%.2f", $0) } ?? "-"):1 "
        + "(gain \(String(format: "%.2f", strengths.0.gain))/\(String(format: "%.2f", strengths.1.gain)), "
        + "scrim \(String(format: "%.2f", strengths.0.scrim))/\(String(format: "%.2f", strengths.1.scrim)))"
    }
  }

  static func measure(_ request: CardRequest, renderer: CardRenderer = Fixtures.renderer, keepAs name: String? = nil)
    throws -> Measure
  {
    var seen: HaloProbe?
    let card = try renderer.render(request) { seen = $0 }
    let probe = try #require(seen)
    if let folder = ProcessInfo.processInfo.environment["INNERPEACE_CONTRAST_DIR"], let name {
      try Data(card.bytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
    }
    let image = try PNGCodec.decode(card.bytes)
    let (width, height) = (probe.width, probe.height)
    // The pixels just outside the glyphs: within 3 px (a 7 x 7 neighbourhood) of a covered one.
    let near = BrightCardTests.near(probe, radius: 3)
    var contrasts: [[Double]] = [[], []]
    for y in 0..<height {
      for x in 0..<width where probe.coverage[y * width + x] == 0 && near[y * width + x] {
        let pixel = image.pixel(probe.left + x, probe.top + y)
        let luminance = HaloContrast.luminance(red: UInt8(pixel.r), green: UInt8(pixel.g), blue: UInt8(pixel.b))
        let line = probe.authorRow.map { y >= $0 ? 1 : 0 } ?? 0
        contrasts[line].append(1.05 / (luminance + 0.05))
      }
    }
    func fifthPercentile(_ values: [Double]) -> Double? {
      guard !values.isEmpty else { return nil }
      return values.sorted()[Int(Double(values.count - 1) * 0.05)]
    }
    return Measure(
      quote: fifthPercentile(contrasts[0]) ?? 0, author: fifthPercentile(contrasts[1]),
      strengths: (probe.quoteStrength, probe.authorStrength))
  }

  @Test(arguments: presets, Fixtures.catalog.pictures)
  func whiteTextKeepsItsContrast(preset: Preset, picture: String) throws {
    for quote in Self.quotes {
      let request = CardRequest(preset: preset, quote: .index(quote), picture: .named(picture), seed: 0)
      let name = "\(preset)-\(picture.split(separator: ".")[0])-\(quote).png"
      let measure = try Self.measure(request, keepAs: name)
      print("contrast \(preset) \(picture) quote \(quote): \(measure)")
      #expect(measure.quote >= 4.5, "\(preset) \(picture) quote \(quote): \(measure)")
      let author = try #require(measure.author, "the catalog quote has an author line")
      #expect(author >= 4.5, "\(preset) \(picture) quote \(quote): \(measure)")
    }
  }

  /// Runs `body` with a renderer whose catalog is one short quote over a photo of one grey.
  func withSolidPhoto(grey: UInt8, _ body: (CardRenderer) throws -> Void) throws {
    try withTemporaryFolder("innerpeace-grey-\(grey)") { folder in
      try folder.writeBytes(try PNGCodec.solidPNG(width: 320, height: 180, grey: grey), to: "grey.png")
      let catalog = try Catalog(
        quotes: [Quote(text: "Peace begins with a smile.", author: "Mother Teresa")], pictures: ["grey.png"],
        directory: folder)
      try body(try CardRenderer(catalog: catalog, backgroundCacheBytes: 0))
    }
  }

  /// On a dark photo the halo is the plain one: the deepening is only where it is needed.
  @Test func darkPhotoKeepsThePlainHalo() throws {
    try withSolidPhoto(grey: 40) { renderer in
      let measure = try Self.measure(CardRequest(preset: .og, quote: .index(0), seed: 1), renderer: renderer)
      #expect(measure.strengths.0 == .plain && measure.strengths.1 == .plain, "\(measure)")
      #expect(measure.quote >= 4.5)
    }
  }

  /// On a white photo the halo is deepened, and the text still reads.
  @Test func whitePhotoDeepensTheHalo() throws {
    try withSolidPhoto(grey: 255) { renderer in
      for preset in [Preset.og, .custom(try CanvasSize(width: 400, height: 400))] {
        let measure = try Self.measure(CardRequest(preset: preset, quote: .index(0), seed: 1), renderer: renderer)
        #expect(measure.strengths.0.gain > 1 && measure.strengths.1.gain > 1, "\(preset): \(measure)")
        #expect(measure.strengths.0.scrim <= HaloContrast.maximumScrim)
        #expect(measure.quote >= 4.5 && (measure.author ?? 0) >= 4.5, "\(preset): \(measure)")
      }
    }
  }

  /// The halo follows the letters: the app's sigmas at its 240 px start size, half of them at
  /// 120 px, and never less than half of them. `classic` keeps the app's halo at every size.
  @Test func haloScalesWithTheFontSize() {
    #expect(Preset.classic.geometry.shadowSigmas(forQuoteSize: 96) == [2, 4, 6, 8, 10])
    for preset in Preset.named + [.custom(try! CanvasSize(width: 400, height: 400))] where preset != .classic {
      let geometry = preset.geometry
      #expect(geometry.shadowSigmas(forQuoteSize: 240) == [2, 4, 6, 8, 10])
      #expect(geometry.shadowSigmas(forQuoteSize: 120) == [1, 2, 3, 4, 5])
      #expect(geometry.shadowSigmas(forQuoteSize: 30) == geometry.shadowSigmas(forQuoteSize: 60))
    }
    #expect(Preset.classic.geometry.shadowSigmas == [2, 4, 6, 8, 10], "classic starts at the app's halo")
  }

  /// The ring is the uncovered pixels within 3 px of a covered one, in x and y.
  @Test func ringIsJustOutsideTheGlyphs() {
    var coverage = [UInt8](repeating: 0, count: 11 * 11)
    coverage[5 * 11 + 5] = 200
    let ring = HaloContrast.ring(coverage, width: 11, height: 11)
    #expect(!ring[5 * 11 + 5], "a covered pixel is not in the ring")
    #expect(ring[2 * 11 + 2] && ring[8 * 11 + 8] && ring[5 * 11 + 8] && ring[2 * 11 + 5])
    #expect(!ring[1 * 11 + 5] && !ring[5 * 11 + 9] && !ring[1 * 11 + 1])
    #expect(ring.count { $0 } == 48)
  }
}
