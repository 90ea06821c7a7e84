import Foundation
import InnerPeace
import Testing

/// AVIF cards (libavif over libaom): decoded again with libavif, they are the card's size and
/// close to the lossless PNG of the same request.
@Suite("AVIF")
struct AVIFTests {
  let renderer = Fixtures.renderer

  /// The peak signal-to-noise ratio of `image` against `reference` over R, G and B, in dB.
  static func psnr(_ image: [UInt8], _ reference: DecodedImage) -> Double {
    var squares = 0.0
    for pixel in 0..<(reference.width * reference.height) {
      for channel in 0..<3 {
        let difference = Double(image[4 * pixel + channel]) - Double(reference.rgba[4 * pixel + channel])
        squares += difference * difference
      }
    }
    let mean = squares / Double(reference.width * reference.height * 3)
    return 10 * log10(255 * 255 / mean)
  }

  /// Measured 42.8 dB (og) and 44.7 dB (story) for this card with libaom 3.6 at the default
  /// quantizer (a bound of 99 fails with those figures); 36 leaves room for another libaom.
  @Test(arguments: [Preset.og, .story])
  func cardDecodesCloseToThePNG(preset: Preset) throws {
    let request = CardRequest(preset: preset, quote: .index(3), picture: .named("aqua.jpg"), seed: 1, format: .avif)
    let card = try renderer.render(request)
    #expect(card.format == .avif)
    #expect(Array(card.bytes[4..<12]) == Array("ftypavif".utf8))
    let decoded = try #require(DecodedAVIF(card.bytes), "libavif cannot read the card")
    var lossless = request
    lossless.format = .png
    let png = try PNGCodec.decode(try renderer.render(lossless).bytes)
    #expect(decoded.width == png.width && decoded.height == png.height)
    #expect(decoded.width == preset.size.width && decoded.height == preset.size.height)
    let psnr = Self.psnr(decoded.rgba, png)
    #expect(psnr > 36, "AVIF \(preset) is \(psnr) dB from the PNG")
    // An opaque card decodes opaque.
    #expect(stride(from: 3, to: decoded.rgba.count, by: 4 * 997).allSatisfy { decoded.rgba[$0] == 255 })
  }

  @Test func transparentCardKeepsAlpha() throws {
    let card = try renderer.render(
      CardRequest(preset: .og, quote: .index(1), seed: 1, format: .avif, transparent: true))
    let image = try #require(DecodedAVIF(card.bytes))
    func alpha(_ x: Int, _ y: Int) -> UInt8 { image.rgba[4 * (y * image.width + x) + 3] }
    for (x, y) in [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)] {
      #expect(alpha(x, y) == 0, "corner (\(x), \(y)) is not transparent")
    }
    var white = 0
    for pixel in 0..<(image.width * image.height) where image.rgba[4 * pixel + 3] == 255 {
      if image.rgba[4 * pixel] >= 240 && image.rgba[4 * pixel + 1] >= 240 && image.rgba[4 * pixel + 2] >= 240 {
        white += 1
      }
    }
    #expect(white > 500, "\(white) opaque white glyph pixels")
  }

  /// `quality` moves the quantizer as libavif 1.x maps it; no quality is quality 81 (quantizer 12).
  @Test func qualityChangesTheQuantizer() throws {
    func bytes(_ quality: Int?) throws -> [UInt8] {
      try renderer.render(
        CardRequest(
          preset: .custom(try CanvasSize(width: 400, height: 300)), quote: .index(2), seed: 4, format: .avif,
          quality: quality)
      ).bytes
    }
    let standard = try bytes(nil)
    #expect(try bytes(81) == standard, "the default is quality 81")
    #expect(try bytes(20).count < standard.count)
    #expect(try bytes(100).count > standard.count)
  }

  @Test func libavifRefusesJunk() {
    #expect(DecodedAVIF([UInt8](repeating: 0, count: 64)) == nil)
    #expect(DecodedAVIF([]) == nil)
  }
}
