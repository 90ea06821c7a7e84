import Foundation
import Testing

@testable import InnerPeace

/// The photo's subject: foci in `pictures.json`, the estimator for photos without one, and the
/// crop that keeps the subject clear of the text.
@Suite("Photo focus and crop")
struct FocusTests {
  // MARK: Parsing

  @Test func objectAndStringEntriesLoad() throws {
    let pictures = #"[{"file": "photo.jpg", "focus": [0.25, 1]}, "plain.jpg", {"file": "bare.jpg"}]"#
    let photo = try bundledPhotoBytes()
    try CatalogTests.withCatalog(pictures: pictures, files: ["plain.jpg": photo, "bare.jpg": photo]) { folder in
      let catalog = try Catalog(directory: folder)
      #expect(catalog.pictures == ["photo.jpg", "plain.jpg", "bare.jpg"])
      #expect(catalog.focus(ofPicture: "photo.jpg") == PictureFocus(x: 0.25, y: 1))
      let estimated = try #require(catalog.focus(ofPicture: "plain.jpg"))
      #expect(estimated.estimated)
      #expect((0...1).contains(estimated.x) && (0...1).contains(estimated.y))
      // The same photo, the same estimate, whichever way it was listed.
      #expect(catalog.focus(ofPicture: "bare.jpg") == estimated)
    }
  }

  @Test(arguments: [
    (#"["photo.jpg", {"file": "photo.jpg", "focus": [1.5, 0.5]}]"#, "picture 1 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "focus": [0.5]}]"#, "picture 0 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "focus": [0.5, 0.5, 0.5]}]"#, "picture 0 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "focus": ["a", 0.5]}]"#, "picture 0 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "focus": [-0.1, 0.5]}]"#, "picture 0 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "focus": null}]"#, "picture 0 \"focus\" is not two numbers"),
    (#"[{"file": "photo.jpg", "crop": [0.5, 0.5]}]"#, "picture 0 has an unknown key \"crop\""),
    (#"[{"focus": [0.5, 0.5]}]"#, "picture 0 has no \"file\" field"),
    (#"[{"file": 3}]"#, "picture 0 \"file\" is not a string"),
    (#"[7]"#, "picture 0 is neither a file name (a string) nor"),
    (#"[[]]"#, "picture 0 is neither a file name (a string) nor"),
  ])
  func badEntriesAreRefusedNamingEntryAndProblem(pictures: String, problem: String) throws {
    let error = try CatalogTests.loadError(pictures: pictures)
    guard case .catalogInvalid(let file, let reason)? = error else {
      Issue.record("expected catalogInvalid, got \(String(describing: error))")
      return
    }
    #expect(file.hasSuffix("pictures.json"))
    #expect(reason.hasPrefix(problem), "\(reason)")
  }

  @Test func objectNamingAMissingFileIsRefused() throws {
    let error = try CatalogTests.loadError(pictures: #"[{"file": "gone.jpg", "focus": [0.5, 0.5]}]"#)
    #expect(error == .pictureMissing(name: "gone.jpg"))
  }

  @Test func bundledPhotosHaveTheirFociGiven() throws {
    let catalog = try Catalog.bundled()
    for name in catalog.pictures {
      let focus = try #require(catalog.focus(ofPicture: name))
      #expect(!focus.estimated, "\(name)")
    }
    #expect(catalog.focus(ofPicture: "lady-bird.jpg") == PictureFocus(x: 0.7, y: 0.52))
  }

  // MARK: Estimator

  /// A flat photo with a bright disc of `radius` centred at (`cx`, `cy`).
  static func blobJPEG(width: Int, height: Int, cx: Int, cy: Int, radius: Int) throws -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: width * height * 3)
    for y in 0..<height {
      for x in 0..<width {
        let inside = (x - cx) * (x - cx) + (y - cy) * (y - cy) <= radius * radius
        let colour: [UInt8] = inside ? [250, 230, 40] : [70, 110, 90]
        pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: colour)
      }
    }
    return try PictureFixtures.jpeg(width: width, height: height, channels: 3, pixels: pixels)
  }

  @Test(arguments: [(480, 120), (90, 300), (320, 200)])
  func estimatorFindsABrightBlob(cx: Int, cy: Int) throws {
    let focus = try FocusEstimator.estimate(try Self.blobJPEG(width: 640, height: 400, cx: cx, cy: cy, radius: 36))
    #expect(focus.estimated)
    #expect(abs(focus.x - Double(cx) / 640) < 0.05, "\(focus)")
    #expect(abs(focus.y - Double(cy) / 400) < 0.05, "\(focus)")
  }

  @Test func flatPhotoHasItsFocusInTheCentre() throws {
    let flat = try PictureFixtures.jpeg(
      width: 320, height: 200, channels: 3, pixels: [UInt8](repeating: 128, count: 320 * 200 * 3))
    #expect(try FocusEstimator.estimate(flat) == PictureFocus(x: 0.5, y: 0.5, estimated: true))
  }

  @Test func estimateIsDeterministic() throws {
    let bytes = try bundledPhotoBytes("lady-bird.jpg")
    #expect(try FocusEstimator.estimate(bytes) == FocusEstimator.estimate(bytes))
  }

  // MARK: Crop

  /// The subject square ``FocusCrop`` keeps clear, on the canvas, for `crop`.
  static func subject(
    photo: (width: Int, height: Int), canvas: (width: Int, height: Int), focus: PictureFocus, crop: FocusCrop
  ) -> PixelRect {
    let scale =
      max(Double(canvas.width) / Double(photo.width), Double(canvas.height) / Double(photo.height)) * crop.zoom
    let width = Double(photo.width) * scale
    let height = Double(photo.height) * scale
    let fx = (Double(canvas.width) - width) * crop.shiftX + focus.x * width
    let fy = (Double(canvas.height) - height) * crop.shiftY + focus.y * height
    let half = 0.1 * min(width, height)
    return PixelRect(x: fx - half, y: fy - half, width: 2 * half, height: 2 * half)
  }

  static func overlap(_ a: PixelRect, _ b: PixelRect) -> Double {
    max(0, min(a.maxX, b.maxX) - max(a.x, b.x)) * max(0, min(a.maxY, b.maxY) - max(a.y, b.y))
  }

  static func block(_ fitted: (x: Double, y: Double, width: Double, height: Double)) -> PixelRect {
    PixelRect(x: fitted.x, y: fitted.y, width: fitted.width, height: fitted.height)
  }

  /// On `og`, the ladybird comes out from behind the words of quotes 60, 56 and 35.
  @Test(arguments: [60, 56, 35])
  func ladybirdLeavesTheTextOnOG(quote: Int) throws {
    let renderer = Fixtures.renderer
    let catalog = renderer.catalog
    let text = catalog.quotes[quote]
    let fitted = try renderer.fitText(text.text, author: text.author, preset: .og)
    let block = Self.block(fitted.block)
    let focus = try #require(catalog.focus(ofPicture: "lady-bird.jpg"))
    let photo = (2400, 1500)
    let canvas = (1200, 630)
    let centred = Self.subject(photo: photo, canvas: canvas, focus: focus, crop: .centred)
    #expect(Self.overlap(centred, block) > 0, "the ladybird is behind the words when centred")
    let crop = catalog.crop(for: "lady-bird.jpg", canvas: canvas, block: block)
    let moved = Self.subject(photo: photo, canvas: canvas, focus: focus, crop: crop)
    // The rule moves the photo in whole quarters of the subject's overlap.
    #expect(Self.overlap(moved, block) <= 0.75 * Self.overlap(centred, block), "\(crop)")
    #expect(crop.zoom <= 1.3)
    #expect(moved.x + moved.width / 2 >= 0 && moved.x + moved.width / 2 <= 1200)
    #expect(moved.y + moved.height / 2 >= 0 && moved.y + moved.height / 2 <= 630)
  }

  /// On `story`, a portrait photo whose subject is in the middle, behind the block of a short
  /// quote, is moved (zoomed within the bound) so the subject sits above or below the block.
  @Test func storySubjectMovesAboveOrBelowTheBlock() throws {
    let block = PixelRect(x: 110, y: 800, width: 860, height: 320)
    let photo = (1200, 2400)
    let canvas = (1080, 1920)
    let focus = PictureFocus(x: 0.5, y: 0.5)
    let centred = Self.subject(photo: photo, canvas: canvas, focus: focus, crop: .centred)
    #expect(Self.overlap(centred, block) > 0)
    let crop = FocusCrop.choose(photo: photo, canvas: canvas, focus: focus, block: block)
    let subject = Self.subject(photo: photo, canvas: canvas, focus: focus, crop: crop)
    #expect(subject.maxY <= block.y || subject.y >= block.maxY, "\(crop) \(subject) \(block)")
    #expect(crop.zoom <= 1.3)
    #expect(subject.y + subject.height / 2 >= 192 && subject.y + subject.height / 2 <= 1920 - 192)
  }

  /// On `story`, a landscape photo's subject far from the centre is kept inside the card.
  @Test func storyKeepsAnOffCentreSubjectInTheCard() throws {
    let focus = PictureFocus(x: 0.08, y: 0.5)
    let crop = FocusCrop.choose(photo: (2400, 1500), canvas: (1080, 1920), focus: focus, block: nil)
    let subject = Self.subject(photo: (2400, 1500), canvas: (1080, 1920), focus: focus, crop: crop)
    let x = subject.x + subject.width / 2
    #expect(x >= 108 - 1 && x <= 1080 - 108 + 1, "\(crop)")
    // Centred, it would be off the card.
    let centred = Self.subject(photo: (2400, 1500), canvas: (1080, 1920), focus: focus, crop: .centred)
    #expect(centred.x + centred.width / 2 < 0)
  }

  @Test func subjectAlreadyClearKeepsTheCentredCrop() {
    let block = PixelRect(x: 110, y: 200, width: 980, height: 230)
    let crop = FocusCrop.choose(
      photo: (2400, 1500), canvas: (1200, 630), focus: PictureFocus(x: 0.5, y: 0.8), block: block)
    #expect(crop == .centred)
    #expect(
      FocusCrop.choose(photo: (2400, 1500), canvas: (1200, 630), focus: PictureFocus(x: 0.5, y: 0.5), block: nil)
        == .centred)
  }

  // MARK: Cache and bytes

  /// The cache keeps one background per crop: the same photo and size cropped two ways are two
  /// backgrounds, and each card shows its own crop.
  @Test func cacheKeyIncludesTheCrop() throws {
    let catalog = Fixtures.catalog
    let renderer = try CardRenderer(catalog: catalog)
    let canvas = (1200, 630)
    func crop(_ quote: Int) throws -> FocusCrop {
      let text = catalog.quotes[quote]
      let fitted = try renderer.fitText(text.text, author: text.author, preset: .og)
      return catalog.crop(for: "lady-bird.jpg", canvas: canvas, block: Self.block(fitted.block))
    }
    let moved = try crop(60)
    #expect(moved != .centred)
    let short = try #require(
      catalog.quotes.indices.first { (try? crop($0)) != moved }, "a quote with another crop")
    func render(_ quote: Int, with renderer: CardRenderer) throws -> [UInt8] {
      try renderer.render(CardRequest(preset: .og, quote: .index(quote), picture: .named("lady-bird.jpg"), seed: 1))
        .bytes
    }
    _ = try render(60, with: renderer)
    #expect(renderer.cachedBackgroundCount == 1)
    let other = try render(short, with: renderer)
    #expect(renderer.cachedBackgroundCount == 2, "another crop, another background")
    // From the cache, the same card as from a cold renderer.
    let cold = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
    #expect(try render(short, with: cold) == other)
    #expect(try render(60, with: renderer) == render(60, with: cold))
  }

  @Test func sameInputsGiveTheSameBytes() throws {
    let first = try CardRenderer(catalog: try Catalog.bundled(), backgroundCacheBytes: 0)
    let second = try CardRenderer(catalog: try Catalog.bundled(), backgroundCacheBytes: 0)
    for preset in [Preset.og, .story] {
      let request = CardRequest(preset: preset, quote: .index(60), picture: .named("lady-bird.jpg"), seed: 3)
      #expect(try first.render(request).bytes == second.render(request).bytes)
    }
  }
}
