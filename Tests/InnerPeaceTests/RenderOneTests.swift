import Foundation
import Testing

@testable import InnerPeace

/// `CardRenderer.renderOne`: the photo read and decoded on a second thread while the fonts load
/// and the text is fitted. The card, and every error, must be those of the one-thread render.
@Suite struct RenderOneTests {
  /// Every bundled photo at every preset, and the ladybird zoomed out from behind the words on
  /// og (quotes 60, 56, 35: crops whose zoom asks for a larger decode than the prefetched one,
  /// or the same), against the one-thread render of a catalog checked at load.
  @Test func sameBytesAsTheOneThreadRender() throws {
    let drawn = try Catalog.bundled(checking: .whenDrawn)
    let reference = Fixtures.renderer
    var requests: [CardRequest] = []
    for (index, picture) in drawn.pictures.enumerated() {
      let preset = [Preset.og, .classic, .square, .story][index % 4]
      requests.append(CardRequest(preset: preset, quote: .index(index), picture: .named(picture), seed: 1))
    }
    for quote in [60, 56, 35] {
      requests.append(CardRequest(preset: .og, quote: .index(quote), picture: .named("lady-bird.jpg"), seed: 1))
    }
    var jpeg = CardRequest(preset: .square, quote: .random, picture: .random, seed: 5)
    jpeg.format = .jpeg
    requests.append(jpeg)
    var zoomed = 0
    for request in requests {
      let card = try CardRenderer.renderOne(request, catalog: drawn)
      let expected = try reference.render(request)
      // A Bool: swift-testing would diff two arrays of a million bytes element by element.
      let same = card.bytes == expected.bytes
      #expect(same, "\(request.preset) \(request.quote) \(request.picture)")
      #expect(card.picture == expected.picture && card.fontSize == expected.fontSize)
      if case .index(let quote) = request.quote, [60, 56, 35].contains(quote) { zoomed += 1 }
    }
    #expect(zoomed == 3)
    // A transparent card has no photo to read.
    var transparent = CardRequest(preset: .og, quote: .index(2), picture: .random, seed: 1)
    transparent.transparent = true
    let sameTransparent =
      try CardRenderer.renderOne(transparent, catalog: drawn).bytes == reference.render(transparent).bytes
    #expect(sameTransparent)
  }

  /// A render asked for two encoder threads (the service's, while a core is idle) gives the same
  /// bytes as the one-thread render, at every preset and for a transparent card; a count out of
  /// range is taken as the nearest of 1 and 2.
  @Test func twoEncoderThreadsGiveTheSameBytes() throws {
    let renderer = Fixtures.renderer
    var requests = [Preset.og, .classic, .square, .story].enumerated().map { index, preset in
      CardRequest(preset: preset, quote: .index(index * 7), picture: .random, seed: 3)
    }
    var transparent = CardRequest(preset: .og, quote: .index(2), picture: .random, seed: 1)
    transparent.transparent = true
    requests.append(transparent)
    for request in requests {
      let one = try renderer.render(request)
      for threads in [2, 0, 9] {
        let same = try renderer.render(request, encoderThreads: threads).bytes == one.bytes
        #expect(same, "\(request.preset), \(threads) threads")
      }
    }
  }

  /// The size the decoder picks for a target is the size it decodes at: what the render relies on
  /// to take the prefetched pixels for a zoomed crop. JPEG at several DCT scales, a quarter-turned
  /// JPEG (EXIF 6), and PNG box reduction.
  @Test func decodedSizeIsTheSizeDecoded() throws {
    let photo = try bundledPhotoBytes("lady-bird.jpg")
    let turned = PictureFixtures.withExif(
      try PictureFixtures.noiseJPEG(width: 640, height: 400),
      tiff: PictureFixtures.tiffWithOrientation(6, bigEndian: false))
    let png = try PNGCodec.solidPNG(width: 900, height: 500, grey: 90)
    let targets = [(1200, 630), (1560, 820), (300, 200), (2048, 1536), (100, 100), (640, 400), (200, 320)]
    for bytes in [photo, turned, png] {
      guard case .success(let header) = ImageDecoding.inspect(bytes) else {
        Issue.record("the fixture does not inspect")
        continue
      }
      for target in targets {
        let pixels = try ImageDecoding.decode(bytes, covering: target)
        let stored = ImageDecoding.decodedSize(header, covering: target)
        let seen = header.orientation >= 5 ? (stored.height, stored.width) : stored
        #expect(pixels.width == seen.0 && pixels.height == seen.1, "\(String(describing: header.kind)) \(target)")
      }
    }
  }

  /// Each way a photo can fail when drawn gives renderOne the error the one-thread render gives:
  /// a photo that is not an image, one gone since the catalog was loaded, one replaced since; and
  /// the request's own errors, before any photo is read.
  @Test func sameErrorsAsTheOneThreadRender() throws {
    let notes = Array("this is not an image\n".utf8)
    let plain = try bundledPhotoBytes("dune.jpg")
    let pictures = #"["photo.jpg", "plain.jpg", "notes.jpg", "gone.jpg", "replaced.jpg"]"#
    try CatalogTests.withCatalog(
      pictures: pictures, files: ["plain.jpg": plain, "notes.jpg": notes, "replaced.jpg": plain]
    ) { folder in
      for checking in [PictureChecking.whenDrawn, .atLoad] {
        if checking == .atLoad {
          // A catalog checked at load needs every photo there when it loads.
          try folder.writeBytes(plain, to: "gone.jpg")
          try folder.writeBytes(plain, to: "notes.jpg")
        }
        let catalog = try Catalog(directory: folder, checking: checking)
        let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
        if checking == .atLoad {
          try FileManager.default.removeItem(at: folder.appendingPathComponent("gone.jpg"))
        }
        // Replaced after the catalog was loaded: another file under the same name.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("replaced.jpg"))
        try folder.writeBytes(plain + [0], to: "replaced.jpg")
        let canvas = Preset.custom(try CanvasSize(width: 480, height: 320))
        var requests = ["notes.jpg", "gone.jpg", "replaced.jpg"].map {
          CardRequest(preset: canvas, quote: .index(0), picture: .named($0), seed: 1)
        }
        requests.append(CardRequest(preset: canvas, quote: .index(9), picture: .random, seed: 1))
        requests.append(CardRequest(preset: canvas, quote: .index(0), picture: .named("nope.jpg"), seed: 1))
        var transparentJPEG = CardRequest(preset: canvas, quote: .index(0), picture: .random, seed: 1)
        (transparentJPEG.transparent, transparentJPEG.format) = (true, .jpeg)
        requests.append(transparentJPEG)
        for (index, request) in requests.enumerated() {
          let alone = Self.outcome { () throws(InnerPeaceError) in try renderer.render(request) }
          let shared = Self.outcome { () throws(InnerPeaceError) in
            try CardRenderer.renderOne(request, catalog: catalog)
          }
          let same = shared == alone
          #expect(same, "\(checking) \(request.picture) gives another card or error")
          // Only a catalog checked at load knows the replaced photo's file; the one checked at
          // load had a photo under the name notes.jpg when it loaded; every other request fails.
          let drawable = index == (checking == .whenDrawn ? 2 : 0)
          let failure: InnerPeaceError? = if case .failure(let error) = alone { error } else { nil }
          #expect(drawable == (failure == nil), "\(checking) \(request.picture): \(String(describing: failure))")
        }
        try folder.writeBytes(plain, to: "replaced.jpg")
      }
    }
  }

  /// The bytes a render makes, or its error.
  static func outcome(_ render: () throws(InnerPeaceError) -> RenderedCard) -> Result<[UInt8], InnerPeaceError> {
    do throws(InnerPeaceError) { return .success(try render().bytes) } catch { return .failure(error) }
  }
}
