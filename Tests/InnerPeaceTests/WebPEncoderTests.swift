import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// The WebP encoder (`innerpeace_webp_encode`): with the loop filter off, libwebp decodes every
/// file to exactly the planes the encoder reconstructed (so the bitstream, the predictions, the
/// transforms and the token probabilities all agree with the format); the SSE2 and the plain loops
/// write the same bytes; with the filter on, as cards are served, the file decodes close to the
/// card. Transparent cards stay with libwebp (`RenderTests`).
@Suite("WebP encoder")
struct WebPEncoderTests {
  typealias Pixels = PNGEncoderTests.Pixels

  /// Encodes with each set of loops, the loop filter off; the files must be the same bytes, and
  /// libwebp must decode them to the encoder's reconstruction exactly.
  static func checkReconstruction(_ image: Pixels, quality: Int = 90) throws -> [UInt8] {
    let results = try image.bytes.withUnsafeBufferPointer { buffer in
      try ImageEncoding.WebPKernels.allCases.map { kernels in
        try ImageEncoding.webp(
          pixels: buffer.baseAddress!, stride: image.stride, width: image.width, height: image.height,
          quality: quality, loopFilter: false, kernels: kernels, reconstruction: true)
      }
    }
    let file = results[0].file
    // Bools, so that a failure does not print (and diff) whole files.
    let sameFiles = results.allSatisfy { $0.file == file }
    let sameReconstructions = results.allSatisfy { $0.reconstruction == results[0].reconstruction }
    #expect(sameFiles, "the SSE2 and the plain loops wrote different files")
    #expect(sameReconstructions, "the SSE2 and the plain loops reconstructed different planes")
    let decoded = try ImageDecoding.webpPlanes(of: file, width: image.width, height: image.height)
    let exact = decoded == results[0].reconstruction
    #expect(exact, "libwebp decodes \(image.testDescription) at quality \(quality) to other planes")
    return file
  }

  /// Opaque synthetic images: sizes of one pixel, odd sizes (partial macroblocks and chroma
  /// samples), noise (every token class up to the longest), flat and smooth areas (empty blocks).
  static let synthetic: [Pixels] = {
    var random = SplitMix(state: 21)
    var images: [Pixels] = []
    for (width, height) in [(1, 1), (2, 1), (7, 3), (17, 5), (33, 1), (1, 40), (63, 65), (250, 300)] {
      images.append(
        PNGEncoderTests.make("noise", width: width, height: height, alpha: false) { _, _ in
          (
            Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random),
            Int.random(in: 0...255, using: &random), 255
          )
        })
    }
    images.append(
      PNGEncoderTests.make("constant", width: 301, height: 200, alpha: false) { _, _ in (40, 200, 90, 255) })
    images.append(PNGEncoderTests.make("black", width: 64, height: 64, alpha: false) { _, _ in (0, 0, 0, 255) })
    images.append(PNGEncoderTests.make("white", width: 48, height: 33, alpha: false) { _, _ in (255, 255, 255, 255) })
    images.append(
      PNGEncoderTests.make("gradient", width: 517, height: 300, alpha: false) { x, y in
        (x % 256, y % 256, (x + y) % 256, 255)
      })
    images.append(
      PNGEncoderTests.make("mixed", width: 640, height: 480, alpha: false) { x, y in
        if y < 100 { return (250, 250, 250, 255) }
        if (x / 7 + y / 11) % 5 == 0 { return (10, 10, 10, 255) }
        let wave = Int(127.5 + 60 * sin(Double(x) / 23) + 60 * cos(Double(y) / 17))
        return (wave, (wave + x) % 256, 255 - wave, 255)
      })
    return images
  }()

  @Test(arguments: synthetic)
  func syntheticImagesDecodeToTheReconstruction(_ image: Pixels) throws {
    _ = try Self.checkReconstruction(image)
  }

  /// The ends of the quality range: quality 100 (VP8's finest quantizer, levels past 67 in the
  /// longest token class), 0 (its coarsest: most blocks empty) and between.
  @Test(arguments: [0, 1, 50, 75, 99, 100])
  func everyQualityDecodesToTheReconstruction(quality: Int) throws {
    for image in Self.synthetic where image.width >= 250 {
      _ = try Self.checkReconstruction(image, quality: quality)
    }
  }

  /// Cards at every preset (classic has more than 12,000 macroblocks, so eight partitions), several
  /// photos and scripts.
  static let cards: [CardRequest] = {
    var cards: [CardRequest] = []
    for preset in [Preset.og, .classic, .square, .story] {
      cards.append(CardRequest(preset: preset, picture: .named("lady-bird.jpg"), seed: 3))
    }
    for picture in ["aqua.jpg", "dune.jpg", "garden.jpg"] {
      cards.append(CardRequest(preset: .og, picture: .named(picture), seed: 5))
    }
    for text in ["静水流深，宁静致远。", "السلام عليكم ورحمة الله", "मन की शांति ही सुख है।"] {
      cards.append(CardRequest(preset: .og, quote: .text(text, author: nil), seed: 6))
    }
    return cards
  }()

  /// Each card's canvas decodes to the reconstruction with the filter off; the renderer's file (the
  /// filter on) is the same encoder's, and decodes within 38 dB PSNR of the canvas (the default
  /// quality gives 41 to 46 dB on the catalog's cards).
  @Test(arguments: cards)
  func cardsDecodeToTheReconstructionAndCloseToTheCanvas(_ request: CardRequest) throws {
    let (image, _) = try PNGEncoderTests.canvas(of: request)
    _ = try Self.checkReconstruction(image)
    var webpRequest = request
    webpRequest.format = .webp
    let served = try Fixtures.renderer.render(webpRequest).bytes
    let direct = try image.bytes.withUnsafeBufferPointer { buffer in
      try ImageEncoding.webp(
        pixels: buffer.baseAddress!, stride: image.stride, width: image.width, height: image.height, quality: 90
      ).file
    }
    #expect(served == direct, "the renderer's WebP is not the encoder's at quality 90 with the filter on")
    var width: Int32 = 0
    var height: Int32 = 0
    let decoded = try #require(WebPDecodeRGB(served, served.count, &width, &height))
    defer { WebPFree(decoded) }
    let expected = image.expected
    var squares = 0.0
    for index in 0..<expected.count {
      let difference = Double(Int(decoded[index]) - Int(expected[index]))
      squares += difference * difference
    }
    let psnr = 10 * log10(255 * 255 / (squares / Double(expected.count)))
    #expect(psnr > 38, "\(request.preset) \(request.picture): PSNR \(psnr) dB")
  }

  /// At the default qualities a card's WebP is smaller than its JPEG (libwebp's own encoder at
  /// method 0 was 0.8x the JPEG; this one is about 0.75x), on every catalog photo at og.
  @Test func photoCardsAreSmallerThanTheirJPEG() throws {
    for picture in Fixtures.catalog.pictures {
      var request = CardRequest(preset: .og, picture: .named(picture), seed: 1, format: .webp)
      let webp = try Fixtures.renderer.render(request).bytes
      request.format = .jpeg
      let jpeg = try Fixtures.renderer.render(request).bytes
      #expect(webp.count < jpeg.count, "\(picture): WebP \(webp.count) bytes, JPEG \(jpeg.count)")
    }
  }

  /// Past 16,384 macroblocks the levels are not kept: the probabilities come from a sample of rows
  /// analysed first, and the tokens go out as they come, in eight partitions. The file still decodes
  /// exactly.
  @Test func aFrameTooLargeToKeepItsLevelsDecodesToTheReconstruction() throws {
    var random = SplitMix(state: 22)
    let image = PNGEncoderTests.make("large", width: 4096, height: 1040, alpha: false) { x, y in
      if (x / 64 + y / 64) % 3 == 0 { return (Int.random(in: 0...255, using: &random), x % 256, y % 256, 255) }
      return ((x + y) % 256, (x * 3) % 256, 128, 255)
    }
    _ = try Self.checkReconstruction(image)
  }

  @Test func imagesVP8CannotHoldAreRefused() {
    let pixels = [UInt8](repeating: 0, count: 16)
    for (width, height) in [(16384, 1), (1, 16384), (0, 1), (1, 0)] {
      let error = innerPeaceError {
        try pixels.withUnsafeBufferPointer { buffer in
          _ = try ImageEncoding.webp(pixels: buffer.baseAddress!, stride: 0, width: width, height: height, quality: 90)
        }
      }
      guard case .encodingFailed(format: .webp, _)? = error else {
        Issue.record("\(width)x\(height): \(String(describing: error))")
        continue
      }
    }
  }
}
