import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// The PNG encoder (`innerpeace_png_encode`): every file decodes, with libpng's own reader, to
/// exactly the pixels encoded (RGB, or straight RGBA unpremultiplied as Cairo's pixels are), and
/// the vector loops (AVX-512, AVX2, SSE2) write the same bytes as the scalar ones, and so does the encoder
/// on several threads.
@Suite("PNG encoder")
struct PNGEncoderTests {
  /// Cairo pixels (B G R X, or premultiplied B G R A), rows `stride` bytes apart.
  struct Pixels: CustomTestStringConvertible {
    let name: String
    let width: Int
    let height: Int
    let alpha: Bool
    var stride: Int { width * 4 + 8 }
    var bytes: [UInt8]
    var testDescription: String { "\(name) \(width)x\(height)\(alpha ? " alpha" : "")" }

    /// The straight RGB or RGBA rows a decoder must give back: alpha 255 keeps the colour, alpha 0
    /// gives black, else each channel is round(c * 255 / a), at most 255.
    var expected: [UInt8] {
      let channels = alpha ? 4 : 3
      var result = [UInt8](repeating: 0, count: width * height * channels)
      bytes.withUnsafeBufferPointer { source in
        result.withUnsafeMutableBufferPointer { target in
          var out = 0
          for y in 0..<height {
            var pixel = y * stride
            for _ in 0..<width {
              let (b, g, r, a) = (
                Int(source[pixel]), Int(source[pixel + 1]), Int(source[pixel + 2]), Int(source[pixel + 3])
              )
              pixel += 4
              if !alpha {
                (target[out], target[out + 1], target[out + 2]) = (UInt8(r), UInt8(g), UInt8(b))
              } else if a == 255 {
                (target[out], target[out + 1], target[out + 2], target[out + 3]) = (UInt8(r), UInt8(g), UInt8(b), 255)
              } else if a > 0 {
                target[out] = UInt8(min(255, (r * 255 + a / 2) / a))
                target[out + 1] = UInt8(min(255, (g * 255 + a / 2) / a))
                target[out + 2] = UInt8(min(255, (b * 255 + a / 2) / a))
                target[out + 3] = UInt8(a)
              }
              out += channels
            }
          }
        }
      }
      return result
    }
  }

  /// Pixels from `pixel(x, y)` as (r, g, b, a); with alpha, the colour is premultiplied (so never
  /// above alpha), as Cairo stores it.
  static func make(
    _ name: String, width: Int, height: Int, alpha: Bool, _ pixel: (Int, Int) -> (Int, Int, Int, Int)
  ) -> Pixels {
    var image = Pixels(name: name, width: width, height: height, alpha: alpha, bytes: [])
    image.bytes = [UInt8](repeating: 0xA5, count: image.stride * height)  // padding that must not leak in
    for y in 0..<height {
      for x in 0..<width {
        var (r, g, b, a) = pixel(x, y)
        if alpha {
          (r, g, b) = ((r * a + 127) / 255, (g * a + 127) / 255, (b * a + 127) / 255)
        } else {
          a = 0x5A  // the unused byte of B G R X
        }
        let offset = y * image.stride + x * 4
        image.bytes.replaceSubrange(offset..<offset + 4, with: [UInt8(b), UInt8(g), UInt8(r), UInt8(a)])
      }
    }
    return image
  }

  static let synthetic: [Pixels] = {
    var images: [Pixels] = []
    for alpha in [false, true] {
      var random = SplitMix(state: alpha ? 2 : 1)
      let sizes = [(1, 1), (2, 1), (7, 3), (17, 5), (33, 1), (1, 40), (5000, 2), (63, 65), (250, 300)]
      for (width, height) in sizes {
        images.append(
          make("noise", width: width, height: height, alpha: alpha) { _, _ in
            (
              Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random),
              Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random)
            )
          })
      }
      images.append(make("constant", width: 301, height: 200, alpha: alpha) { _, _ in (40, 200, 90, 128) })
      images.append(make("black", width: 64, height: 64, alpha: alpha) { _, _ in (0, 0, 0, 0) })
      images.append(
        make("gradient", width: 517, height: 300, alpha: alpha) { x, y in
          (x % 256, y % 256, (x + y) % 256, (x * 3) % 256)
        })
      // Flat areas, thin strokes and a soft photo-like field: every kind of block, runs of zeros
      // longer than a match, and all four filters.
      images.append(
        make("mixed", width: 640, height: 480, alpha: alpha) { x, y in
          if y < 100 { return (250, 250, 250, 255) }
          if (x / 7 + y / 11) % 5 == 0 { return (10, 10, 10, 255) }
          let wave = Int(127.5 + 60 * sin(Double(x) / 23) + 60 * cos(Double(y) / 17))
          let jitter = Int.random(in: 0...6, using: &random)
          return (wave + jitter / 2, (wave + x) % 256, 255 - wave, x < 320 ? 255 : (wave + jitter) % 256)
        })
    }
    return images
  }()

  /// The thread counts compared with one thread: two and three split the bands unevenly or evenly,
  /// eight is more threads than most images have bands.
  static let threadCounts = [2, 3, 8]

  /// Encodes with each set of loops (the processor's best, AVX2, SSE2 only, plain C) on one thread, and
  /// with the best loops on each of ``threadCounts``; the files must be the same bytes.
  static func encode(_ image: Pixels) throws -> [UInt8] {
    try image.bytes.withUnsafeBufferPointer { buffer in
      let files = try ImageEncoding.PNGKernels.allCases.map { kernels in
        try ImageEncoding.png(
          pixels: buffer.baseAddress!, stride: image.stride, width: image.width, height: image.height,
          alpha: image.alpha, kernels: kernels)
      }
      #expect(files.allSatisfy { $0 == files[0] }, "the loops wrote different files")
      for threads in threadCounts {
        let threaded = try ImageEncoding.png(
          pixels: buffer.baseAddress!, stride: image.stride, width: image.width, height: image.height,
          alpha: image.alpha, threads: threads)
        // A Bool, so that a failure does not print (and diff) two files of megabytes.
        let same = threaded == files[0]
        #expect(same, "\(threads) threads wrote another file than one")
      }
      return files[0]
    }
  }

  static func decode(_ png: [UInt8], like image: Pixels) throws -> [UInt8] {
    try ImageDecoding.exactPixels(
      ofPNG: png, width: image.width, height: image.height, channels: image.alpha ? 4 : 3)
  }

  /// Images of many bands (an og card's width has 36 rows a band), for the encoder on several
  /// threads: noise whose bands all go stored, stripes of noise and smooth rows (stored bands
  /// between coded ones, on every thread), a flat image (libdeflate after the bands), a gradient,
  /// one long row, one tall column, and two bands (fewer than three or eight threads).
  static let banded: [Pixels] = {
    var images: [Pixels] = []
    for alpha in [false, true] {
      var random = SplitMix(state: alpha ? 4 : 3)
      images.append(
        make("noise", width: 1200, height: 400, alpha: alpha) { _, _ in
          (
            Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random),
            Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random)
          )
        })
      images.append(
        make("stripes", width: 1000, height: 900, alpha: alpha) { x, y in
          if (y / 47) % 3 == 1 { return ((x * 5) % 256, (x + y) % 256, 128, 255) }
          return (
            Int.random(in: 0...255, using: &random), Int.random(in: 0...255, using: &random),
            Int.random(in: 0...255, using: &random), Int.random(in: 1...255, using: &random)
          )
        })
      images.append(make("flat", width: 1200, height: 630, alpha: alpha) { _, _ in (30, 60, 90, 200) })
      images.append(
        make("gradient", width: 1200, height: 630, alpha: alpha) { x, y in
          ((x + y) % 256, (x * 2 + Int.random(in: 0...3, using: &random)) % 256, y % 256, 255 - x % 128)
        })
      images.append(
        make("row", width: 20000, height: 1, alpha: alpha) { _, _ in
          (Int.random(in: 0...255, using: &random), 7, Int.random(in: 0...9, using: &random), 255)
        })
      images.append(
        make("column", width: 1, height: 30000, alpha: alpha) { _, y in
          (y % 256, Int.random(in: 0...255, using: &random), 40, y % 200 + 50)
        })
      // 1200 x 3 + 1 bytes a row: 36 rows a band, so 60 rows are two bands.
      images.append(
        make("two bands", width: 1200, height: 60, alpha: alpha) { x, y in
          ((x ^ y) % 256, Int.random(in: 0...255, using: &random), x % 256, 255)
        })
    }
    return images
  }()

  /// On 1, 2, 3 and 8 threads, images of many bands are the same bytes (``encode(_:)``), and the
  /// file decodes to their pixels.
  @Test(arguments: banded)
  func bandedImagesAreTheSameFileOnAnyThreadsAndDecodeToTheirPixels(_ image: Pixels) throws {
    let png = try Self.encode(image)
    let decoded = try Self.decode(png, like: image)
    #expect(decoded == image.expected)
  }

  @Test(arguments: synthetic)
  func syntheticImagesDecodeToTheirPixels(_ image: Pixels) throws {
    let png = try Self.encode(image)
    let decoded = try Self.decode(png, like: image)
    #expect(decoded == image.expected)
  }

  @Test func aFileIsNeverMuchLargerThanItsPixels() throws {
    // Noise does not compress: its bands go stored, a few bytes each over the raw rows.
    let noise = try #require(Self.synthetic.first { $0.name == "noise" && $0.width == 250 && !$0.alpha })
    let png = try Self.encode(noise)
    #expect(png.count <= (noise.width * 3 + 1) * noise.height + 200)
    // A flat image goes through libdeflate: a few kilobytes at most.
    let constant = try #require(Self.synthetic.first { $0.name == "constant" && !$0.alpha })
    #expect(try Self.encode(constant).count < 1024)
  }

  /// Cards at every preset, opaque and transparent, several photos and scripts: the PNG decodes
  /// to the canvas's pixels exactly.
  struct Card: CustomTestStringConvertible {
    let request: CardRequest
    var testDescription: String {
      "\(request.preset) \(request.transparent ? "transparent" : "opaque") \(request.picture) \(request.quote)"
    }
  }

  static let cards: [Card] = {
    var cards: [Card] = []
    for preset in [Preset.og, .classic, .square, .story] {
      cards.append(Card(request: CardRequest(preset: preset, picture: .named("lady-bird.jpg"), seed: 3)))
      cards.append(Card(request: CardRequest(preset: preset, seed: 4, transparent: true)))
    }
    for picture in ["aqua.jpg", "dune.jpg", "garden.jpg"] {
      cards.append(Card(request: CardRequest(preset: .og, picture: .named(picture), seed: 5)))
    }
    for text in ["静水流深，宁静致远。", "السلام عليكم ورحمة الله", "मन की शांति ही सुख है।"] {
      cards.append(Card(request: CardRequest(preset: .og, quote: .text(text, author: nil), seed: 6)))
      cards.append(Card(request: CardRequest(preset: .og, quote: .text(text, author: nil), seed: 6, transparent: true)))
    }
    return cards
  }()

  /// The canvas's pixels (the card drawn, before encoding) and the renderer's PNG.
  static func canvas(of request: CardRequest) throws -> (image: Pixels, png: [UInt8]) {
    var canvas: Pixels?
    let rendered = try Fixtures.renderer.render(request, probe: nil) { surface in
      var image = Pixels(
        name: "card", width: surface.width, height: surface.height, alpha: surface.format == .argb32, bytes: [])
      let copyStride = image.stride
      var bytes = [UInt8](repeating: 0, count: copyStride * surface.height)
      bytes.withUnsafeMutableBufferPointer { target in
        for y in 0..<surface.height {
          (target.baseAddress! + y * copyStride).update(
            from: surface.data + y * surface.stride, count: surface.width * 4)
        }
      }
      image.bytes = bytes
      canvas = image
    }
    return (try #require(canvas), rendered.bytes)
  }

  /// The size of libpng's file with its default settings (Cairo's PNG writer: zlib level 6,
  /// adaptive filters) for the same pixels, opaque or transparent.
  static func libpngDefaultSize(of image: Pixels) throws -> Int {
    var bytes = image.bytes
    let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int in
      let surface = cairo_image_surface_create_for_data(
        buffer.baseAddress, image.alpha ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24, Int32(image.width),
        Int32(image.height), Int32(image.stride))
      defer { cairo_surface_destroy(surface) }
      var count = 0
      let status = withUnsafeMutablePointer(to: &count) { counter in
        cairo_surface_write_to_png_stream(
          surface,
          { closure, _, length in
            closure!.assumingMemoryBound(to: Int.self).pointee += Int(length)
            return CAIRO_STATUS_SUCCESS
          }, counter)
      }
      return status == CAIRO_STATUS_SUCCESS ? count : 0
    }
    return try #require(written > 0 ? written : nil)
  }

  /// Photo cards at most 10 % larger than libpng's default file of the same pixels: every catalog
  /// photo at og, and the bench's card (the first photo, its quote of about 160 characters) at
  /// every preset. Photos such as aqua.jpg need the band matcher (1.12x without it).
  @Test func photoCardsAreWithinTenPercentOfLibpng() throws {
    let catalog = Fixtures.catalog
    let quote = catalog.quotes.indices.min(by: {
      abs(catalog.quotes[$0].text.count - 160) < abs(catalog.quotes[$1].text.count - 160)
    })!
    var requests = catalog.pictures.map {
      CardRequest(preset: .og, quote: .index(quote), picture: .named($0), seed: 1)
    }
    for preset in [Preset.classic, .square, .story] {
      requests.append(CardRequest(preset: preset, quote: .index(quote), picture: .named(catalog.pictures[0]), seed: 1))
    }
    // Transparent cards (mostly empty, the halo and the text) are files too: og and classic.
    for preset in [Preset.og, .classic] {
      requests.append(CardRequest(preset: preset, quote: .index(quote), seed: 1, transparent: true))
    }
    for request in requests {
      let (image, png) = try Self.canvas(of: request)
      let reference = try Self.libpngDefaultSize(of: image)
      let ratio = Double(png.count) / Double(reference)
      #expect(
        ratio <= 1.10, "\(request.preset) \(request.picture): \(png.count) bytes, libpng \(reference) (\(ratio)x)")
    }
  }

  @Test(arguments: cards)
  func cardsDecodeToTheCanvasPixels(_ card: Card) throws {
    let (image, png) = try Self.canvas(of: card.request)
    #expect(image.alpha == card.request.transparent)
    let decoded = try Self.decode(png, like: image)
    #expect(decoded == image.expected)
    // The renderer's file is the encoder's, and every set of loops agrees.
    #expect(try Self.encode(image) == png)
  }
}
