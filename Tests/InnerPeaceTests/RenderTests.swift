import CInnerPeace
import Foundation
import InnerPeace
import Testing

@Suite("Rendering")
struct RenderTests {
  let renderer = Fixtures.renderer

  // MARK: Determinism and formats

  @Test(arguments: ImageFormat.allCases)
  func sameRequestGivesTheSameBytes(format: ImageFormat) throws {
    let request = CardRequest(preset: .og, seed: 42, format: format)
    let first = try renderer.render(request)
    let second = try renderer.render(request)
    #expect(first.bytes == second.bytes, "two renders of the same request differ")
    // A separate renderer (cold cache, its own state) gives the same bytes too.
    let fresh = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 0)
    #expect(try fresh.render(request).bytes == first.bytes, "a cold renderer gives different bytes")
    #expect(first.format == format)
    #expect(first.quoteIndex == second.quoteIndex && first.picture == second.picture)
    switch format {
    case .png: #expect(Array(first.bytes.prefix(8)) == pngSignature)
    case .jpeg:
      #expect(Array(first.bytes.prefix(3)) == [0xFF, 0xD8, 0xFF])
      #expect(Array(first.bytes.suffix(2)) == [0xFF, 0xD9])
    case .webp:
      #expect(Array(first.bytes.prefix(4)) == Array("RIFF".utf8))
      #expect(Array(first.bytes[8..<12]) == Array("WEBP".utf8))
      // The RIFF size covers the whole file.
      let riffSize = first.bytes[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
      #expect(riffSize + 8 == first.bytes.count)
    case .avif:
      // An ISO BMFF file of the AVIF brand, which libavif reads back at the card's size.
      #expect(Array(first.bytes[4..<12]) == Array("ftypavif".utf8))
      let decoded = DecodedAVIF(first.bytes)
      #expect(decoded?.width == 1200 && decoded?.height == 630)
    }
  }

  @Test func sameRequestFromManyThreadsGivesTheSameBytes() async throws {
    let request = CardRequest(preset: .custom(try CanvasSize(width: 480, height: 320)), seed: 11)
    let renderer = self.renderer
    let reference = try renderer.render(request).bytes
    let results = try await withThrowingTaskGroup(of: [UInt8].self) { group in
      for _ in 0..<4 { group.addTask { try renderer.render(request).bytes } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results.count == 4)
    #expect(results.allSatisfy { $0 == reference })
  }

  @Test func differentSeedsPickDifferentCards() throws {
    var choices: Set<String> = []
    var outputs: Set<[UInt8]> = []
    let size = Preset.custom(try CanvasSize(width: 300, height: 200))
    for seed: UInt64 in [1, 2, 3, 4, 5, 6] {
      let card = try renderer.render(CardRequest(preset: size, seed: seed))
      let index = try #require(card.quoteIndex)
      let picture = try #require(card.picture)
      #expect(Fixtures.catalog.quotes.indices.contains(index))
      #expect(Fixtures.catalog.pictures.contains(picture))
      #expect(card.quote == Fixtures.catalog.quotes[index])
      choices.insert("\(index)/\(picture)")
      outputs.insert(card.bytes)
    }
    #expect(choices.count >= 4, "six seeds chose only \(choices)")
    #expect(outputs.count == choices.count)
  }

  @Test func choosingTheQuoteDoesNotChangeTheRandomPicture() throws {
    let size = Preset.custom(try CanvasSize(width: 300, height: 200))
    let random = try renderer.render(CardRequest(preset: size, seed: 99))
    let chosen = try renderer.render(CardRequest(preset: size, quote: .index(3), seed: 99))
    #expect(chosen.picture == random.picture)
    #expect(chosen.quoteIndex == 3)
    let named = try renderer.render(CardRequest(preset: size, picture: .named("dune.jpg"), seed: 99))
    #expect(named.quoteIndex == random.quoteIndex)
    #expect(named.picture == "dune.jpg")
  }

  @Test(arguments: [Preset.og, .square, .custom(try! CanvasSize(width: 333, height: 201))])
  func pngDecodesAtThePresetSize(preset: Preset) throws {
    let card = try renderer.render(CardRequest(preset: preset, quote: .index(1), seed: 5))
    #expect(card.size == preset.size)
    let header = try #require(PNGHeader(card.bytes))
    #expect(header.width == preset.size.width && header.height == preset.size.height)
    #expect(header.bitDepth == 8)
    #expect(header.colourType == 2, "an opaque card is RGB")
    let image = try PNGCodec.decode(card.bytes)
    #expect(image.width == preset.size.width && image.height == preset.size.height)
    #expect(!image.hasAlpha)
    // Ends with an IEND chunk.
    #expect(Array(card.bytes.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
  }

  @Test func shareMessageIsTheAppsFormat() throws {
    let quote = Fixtures.catalog.quotes[1]
    let card = try renderer.render(
      CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), quote: .index(1), seed: 1))
    #expect(card.shareMessage == "\"\(quote.text)\" \u{2014} \(quote.author)")
    #expect(card.quote == quote)
    let custom = try renderer.render(
      CardRequest(
        preset: .custom(try CanvasSize(width: 300, height: 200)), quote: .text("  Be here.\r\n", author: nil), seed: 1))
    #expect(custom.shareMessage == "\"Be here.\"")
    #expect(custom.quoteIndex == nil)
  }

  // MARK: Transparency

  @Test func transparentPNGHasAlphaAndAClearCorner() throws {
    let card = try renderer.render(CardRequest(preset: .og, quote: .index(1), seed: 1, transparent: true))
    #expect(card.picture == nil)
    let header = try #require(PNGHeader(card.bytes))
    #expect(header.colourType == 6, "a transparent card is RGBA")
    let image = try PNGCodec.decode(card.bytes)
    #expect(image.hasAlpha)
    for (x, y) in [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)] {
      #expect(image.pixel(x, y).a == 0, "corner (\(x), \(y)) is not transparent")
    }
    // Opaque white glyph pixels and dark, partly transparent halo pixels both exist.
    var white = 0
    var halo = 0
    for y in 0..<image.height {
      for x in 0..<image.width {
        let p = image.pixel(x, y)
        if p.a == 255 && p.r >= 250 && p.g >= 250 && p.b >= 250 { white += 1 }
        if p.a > 16 && p.a < 200 && p.r < 40 && p.g < 40 && p.b < 40 { halo += 1 }
      }
    }
    #expect(white > 500, "\(white) white glyph pixels")
    #expect(halo > 2_000, "\(halo) dark halo pixels")
  }

  @Test func transparentWebPKeepsAlpha() throws {
    let card = try renderer.render(
      CardRequest(preset: .og, quote: .index(1), seed: 1, format: .webp, transparent: true))
    #expect(Array(card.bytes[8..<12]) == Array("WEBP".utf8))
    let chunk = String(decoding: card.bytes[12..<16], as: UTF8.self)
    #expect(chunk == "VP8L" || chunk == "VP8X", "an alpha WebP is VP8L or VP8X, not \(chunk)")
    if chunk == "VP8X" { #expect(card.bytes[20] & 0x10 != 0, "VP8X alpha flag") }
  }

  /// WebP is lossy, but its pixels are the card's: opaque cards are imported from Cairo's BGRX
  /// bytes as they are, transparent ones unpremultiplied to RGBA. A channel order or alpha mistake
  /// costs far more than the 35 dB floor (the default quality gives about 42 dB at og).
  @Test(arguments: [false, true]) func webPDecodesToTheCardsPixels(transparent: Bool) throws {
    func card(_ format: ImageFormat) throws -> [UInt8] {
      try renderer.render(
        CardRequest(preset: .og, quote: .index(3), seed: 5, format: format, transparent: transparent)
      ).bytes
    }
    let reference = try PNGCodec.decode(try card(.png))
    let webp = try card(.webp)
    var width: Int32 = 0
    var height: Int32 = 0
    let decoded = try #require(WebPDecodeRGBA(webp, webp.count, &width, &height))
    defer { WebPFree(decoded) }
    #expect(Int(width) == reference.width && Int(height) == reference.height)
    var squares = 0.0
    var alphaOff = 0
    for index in 0..<reference.width * reference.height {
      let alpha = Int(reference.rgba[4 * index + 3])
      alphaOff = max(alphaOff, abs(Int(decoded[4 * index + 3]) - alpha))
      // Colour counts where it shows: weighted by the reference's alpha.
      for channel in 0..<3 {
        let difference = Double(Int(decoded[4 * index + channel]) - Int(reference.rgba[4 * index + channel]))
        squares += difference * difference * Double(alpha) / 255
      }
    }
    let psnr = 10 * log10(255 * 255 / (squares / Double(3 * reference.width * reference.height)))
    #expect(psnr > 35, "PSNR \(psnr) dB against the PNG")
    #expect(alphaOff <= (transparent ? 8 : 0), "alpha off by \(alphaOff)")
  }

  @Test func jpegCannotBeTransparent() {
    let error = innerPeaceError {
      try renderer.render(CardRequest(preset: .og, seed: 1, format: .jpeg, transparent: true))
    }
    #expect(error == .transparencyUnsupported(format: .jpeg))
    #expect(error?.description.localizedCaseInsensitiveContains("JPEG") == true)
  }

  // MARK: Bad requests

  @Test func quoteIndexOutOfRange() {
    let count = Fixtures.catalog.quotes.count
    for index in [count, count + 1, -1, Int.max, Int.min] {
      let error = innerPeaceError { try renderer.render(CardRequest(quote: .index(index), seed: 1)) }
      #expect(error == .quoteIndexOutOfRange(index: index, count: count))
    }
  }

  @Test func unknownPicture() {
    let error = innerPeaceError { try renderer.render(CardRequest(picture: .named("nope.jpg"), seed: 1)) }
    #expect(error == .pictureUnknown(name: "nope.jpg"))
    // A file that is in the folder but not listed is unknown too.
    let unlisted = innerPeaceError { try renderer.render(CardRequest(picture: .named("CREDITS.md"), seed: 1)) }
    #expect(unlisted == .pictureUnknown(name: "CREDITS.md"))
  }

  @Test(arguments: [
    "../aqua.jpg", "Resources/aqua.jpg", "/etc/passwd", "..", ".", ".aqua.jpg", "", "a\\b.jpg", "./aqua.jpg",
  ])
  func pictureNamesThatAreNotPlainFileNames(name: String) {
    let error = innerPeaceError { try renderer.render(CardRequest(picture: .named(name), seed: 1)) }
    #expect(error == .pictureNameInvalid(name: name))
  }

  @Test func invalidCustomTextIsRejectedBeforeDrawing() {
    for text in ["", "  \n ", String(repeating: "x", count: Limits.maximumTextCharacters + 1)] {
      let error = innerPeaceError { try renderer.render(CardRequest(quote: .text(text, author: nil), seed: 1)) }
      guard case .textInvalid? = error else {
        Issue.record("expected textInvalid, got \(String(describing: error))")
        continue
      }
    }
  }

  // MARK: Text is text

  @Test func markupIsDrawnAsWritten() throws {
    let preset = Preset.og
    let tagged = try renderer.render(
      CardRequest(preset: preset, quote: .text("<b>bold</b>", author: nil), picture: .named("aqua.jpg"), seed: 1))
    let plain = try renderer.render(
      CardRequest(preset: preset, quote: .text("bold", author: nil), picture: .named("aqua.jpg"), seed: 1))
    #expect(tagged.bytes != plain.bytes)
    #expect(tagged.quote.text == "<b>bold</b>")
    #expect(tagged.shareMessage == "\"<b>bold</b>\"")
    // The tags take room: the same size, a wider block.
    let taggedFit = try renderer.fitText("<b>bold</b>", author: "", preset: preset)
    let plainFit = try renderer.fitText("bold", author: "", preset: preset)
    #expect(taggedFit.fontSize == plainFit.fontSize)
    #expect(taggedFit.block.width > plainFit.block.width * 2)
    // Broken markup and entities are plain text, never a parse error.
    for text in ["<span foreground='red'>unclosed", "a & b", "&amp; &lt;", "<i>", "</b>"] {
      _ = try renderer.render(
        CardRequest(
          preset: .custom(try CanvasSize(width: 300, height: 200)), quote: .text(text, author: "<b>x"), seed: 1))
      let fit = try renderer.fitText(text, author: "", preset: preset)
      #expect(fit.block.width > 0)
    }
    let entity = try renderer.fitText("&amp;", author: "", preset: preset)
    let ampersand = try renderer.fitText("&", author: "", preset: preset)
    #expect(entity.block.width > ampersand.block.width * 2, "'&amp;' must not become '&'")
  }

  // MARK: Fonts

  @Test func bundledFontSetsTheQuote() throws {
    let path = renderer.bundledFontPath
    #expect(path.hasSuffix("/Fonts/EBGaramond12-Italic.otf"), "\(path)")
    #expect(FileManager.default.fileExists(atPath: path))
    // The machine may have EB Garamond installed too (Debian's fonts-ebgaramond): the bundled file must win.
    for text in ["Peace", "Peace comes from within. — Buddha", "Ruhe, Frieden, sérénité"] {
      let files = renderer.fontFiles(for: text)
      #expect(files.first == path, "\(text): \(files)")
      #expect(
        files.allSatisfy { !$0.hasPrefix("/usr/share/fonts") && !$0.hasPrefix("/usr/local/share/fonts") },
        "\(text): \(files)")
    }
  }

  @Test func bundledFontWinsOnEveryThread() {
    let path = renderer.bundledFontPath
    let renderer = self.renderer
    let firsts = ResultBox<[String?]>()
    DispatchQueue.concurrentPerform(iterations: 6) { _ in
      let first = renderer.fontFiles(for: "Serenity").first
      firsts.lock.withLock { firsts.value = (firsts.value ?? []) + [first] }
    }
    let all = firsts.lock.withLock { firsts.value ?? [] }
    #expect(all.count == 6)
    #expect(all.allSatisfy { $0 == path }, "\(all)")
  }

  @Test func otherScriptsFallBackToSystemFonts() {
    let path = renderer.bundledFontPath
    for text in ["静かな心", "السلام"] {
      let files = renderer.fontFiles(for: text)
      #expect(!files.isEmpty)
      #expect(files.contains { $0 != path }, "\(text) has no fallback font: \(files)")
      #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }
  }

  /// A renderer asked for another fonts folder must use it or say it cannot, not silently keep
  /// the first folder registered in the process.
  @Test func fontsDirectoryIsHonouredOrRejected() throws {
    _ = renderer.bundledFontPath  // the shared renderer has registered the bundled fonts
    try withTemporaryFolder("innerpeace-nofonts") { empty in
      let error = innerPeaceError { try CardRenderer(catalog: Fixtures.catalog, fontsDirectory: empty) }
      guard case .fontsUnavailable? = error else {
        Issue.record("a fonts folder without the font was accepted: \(String(describing: error))")
        return
      }
    }
  }

  // MARK: Alignment

  /// Horizontal extents of solid glyph pixels in two row bands of a transparent card: the first
  /// and the second of two lines.
  static func lineExtents(_ text: String, alignment: TextAlignment) throws -> [(minX: Int, maxX: Int)] {
    let preset = Preset.og
    let renderer = Fixtures.renderer
    let card = try renderer.render(
      CardRequest(preset: preset, quote: .text(text, author: nil), seed: 1, alignment: alignment, transparent: true))
    let image = try PNGCodec.decode(card.bytes)
    let fit = try renderer.fitText(text, author: "", preset: preset, alignment: alignment)
    return [(0.1, 0.4), (0.6, 0.9)].map { band in
      var minX = Int.max
      var maxX = Int.min
      for y in Int(fit.block.y + band.0 * fit.block.height)..<Int(fit.block.y + band.1 * fit.block.height) {
        for x in 0..<image.width where image.pixel(x, y).a == 255 {
          minX = min(minX, x)
          maxX = max(maxX, x)
        }
      }
      return (minX, maxX)
    }
  }

  @Test func naturalAlignmentIsLeftForLatinAndRightForArabic() throws {
    let latin = try Self.lineExtents("Peace be with you always\nCalm", alignment: .natural)
    #expect(abs(latin[0].minX - latin[1].minX) < 20, "Latin lines are flush left: \(latin)")
    #expect(latin[0].maxX - latin[1].maxX > 200, "\(latin)")

    let arabic = try Self.lineExtents("السلام عليكم ورحمة\nسلام", alignment: .natural)
    #expect(abs(arabic[0].maxX - arabic[1].maxX) < 20, "Arabic lines are flush right: \(arabic)")
    #expect(arabic[1].minX - arabic[0].minX > 200, "\(arabic)")
  }

  @Test func centerAlignmentCentresEveryLine() throws {
    for text in ["Peace be with you always\nCalm", "السلام عليكم ورحمة\nسلام"] {
      let lines = try Self.lineExtents(text, alignment: .center)
      let centres = lines.map { Double($0.minX + $0.maxX) / 2 }
      #expect(abs(centres[0] - centres[1]) < 20, "\(text): \(lines)")
      #expect((lines[0].maxX - lines[0].minX) - (lines[1].maxX - lines[1].minX) > 200)
    }
  }

  // MARK: The text layer

  /// A catalog whose only picture is flat mid grey, so every change the text makes is visible.
  static func withGreyCatalog<T>(_ body: (CardRenderer) throws -> T) throws -> T {
    try withTemporaryFolder("innerpeace-grey") { folder in
      try folder.writeBytes(try PNGCodec.solidPNG(width: 320, height: 180, grey: 128), to: "grey.png")
      let catalog = try Catalog(
        quotes: [Quote(text: "Peace begins with a smile.", author: "Mother Teresa")], pictures: ["grey.png"],
        directory: folder)
      return try body(try CardRenderer(catalog: catalog, backgroundCacheBytes: 0))
    }
  }

  @Test func textIsWhiteWithADarkHaloOverTheBackground() throws {
    try Self.withGreyCatalog { renderer in
      let preset = Preset.og
      let opaque = try PNGCodec.decode(
        try renderer.render(CardRequest(preset: preset, quote: .index(0), seed: 1)).bytes)
      let layer = try PNGCodec.decode(
        try renderer.render(CardRequest(preset: preset, quote: .index(0), seed: 1, transparent: true)).bytes)
      let fit = try renderer.fitText("Peace begins with a smile.", author: "Mother Teresa", preset: preset)
      let margin = Double(preset.geometry.haloMargin)
      let textImage = (
        left: Int((fit.block.x - margin).rounded(.down)), top: Int((fit.block.y - margin).rounded(.down)),
        right: Int((fit.block.x + fit.block.width + margin).rounded(.up)),
        bottom: Int((fit.block.y + fit.block.height + margin).rounded(.up))
      )

      var glyphs = 0
      var glyphsNearWhite = 0
      var darkened = 0
      var outsideChanged = 0
      var layerOutside = 0
      for y in 0..<opaque.height {
        for x in 0..<opaque.width {
          let inside = x >= textImage.left && x < textImage.right && y >= textImage.top && y < textImage.bottom
          let p = layer.pixel(x, y)
          let luma = opaque.luma(x, y)
          if !inside {
            // Outside the text image (the text rect grown by the halo margin) nothing is drawn.
            if p.a != 0 { layerOutside += 1 }
            if abs(luma - 128) > 1.5 { outsideChanged += 1 }
            continue
          }
          if p.a == 255 && p.r >= 250 && p.g >= 250 && p.b >= 250 {
            glyphs += 1
            if luma >= 235 { glyphsNearWhite += 1 }
          } else if p.a > 0 && luma < 100 {
            darkened += 1
          }
        }
      }
      #expect(glyphs > 1_000, "\(glyphs) solid glyph pixels")
      #expect(
        Double(glyphsNearWhite) >= 0.99 * Double(glyphs), "\(glyphsNearWhite) of \(glyphs) glyph pixels are near white")
      #expect(darkened > 5_000, "the halo darkened only \(darkened) pixels below the grey background")
      #expect(outsideChanged == 0, "\(outsideChanged) pixels changed outside the text image")
      #expect(layerOutside == 0, "\(layerOutside) layer pixels drawn outside the text image")
      // Far corners are the flat background, exactly.
      for (x, y) in [(0, 0), (opaque.width - 1, opaque.height - 1)] {
        let p = opaque.pixel(x, y)
        #expect(abs(p.r - 128) <= 1 && abs(p.g - 128) <= 1 && abs(p.b - 128) <= 1)
      }
    }
  }

  @Test func haloDarkensMostNextToTheGlyphs() throws {
    try Self.withGreyCatalog { renderer in
      let preset = Preset.og
      let card = try PNGCodec.decode(
        try renderer.render(CardRequest(preset: preset, quote: .text("I", author: nil), seed: 1)).bytes)
      let layer = try PNGCodec.decode(
        try renderer.render(CardRequest(preset: preset, quote: .text("I", author: nil), seed: 1, transparent: true))
          .bytes)
      // Walk right from the middle row of the glyph: find the glyph's right edge, then sample outward.
      let fit = try renderer.fitText("I", author: "", preset: preset)
      let y = Int(fit.block.y + fit.block.height / 2)
      let opaqueColumns = (0..<layer.width).filter { layer.pixel($0, y).a == 255 }
      let edge = try #require(opaqueColumns.last, "no opaque glyph pixel on the middle row")
      // og's shadows are sigma 1...5 px: the halo fades out within about 15 px.
      let lumas = [2, 4, 7, 11].map { card.luma(edge + $0, y) }
      for (near, far) in zip(lumas, lumas.dropFirst()) {
        #expect(near < far, "the halo must lighten with distance: \(lumas)")
      }
      #expect(lumas[0] < 60, "right next to the glyph the halo is dark: \(lumas)")
      #expect(abs(card.luma(edge + 40, y) - 128) < 1.5, "far from the glyph, the background: \(lumas)")
    }
  }

  @Test func backgroundFillsTheCanvasWithoutStretching() throws {
    // A 400 x 100 white picture with a 20 x 20 black square at (150, 5). Covering 1200 x 630
    // scales it by 6.3 (height decides) and crops (2520 - 1200) / 2 = 660 px off each side.
    try withTemporaryFolder("innerpeace-cover") { folder in
      var rgba = [UInt8](repeating: 255, count: 400 * 100 * 4)
      for y in 5..<25 {
        for x in 150..<170 { for c in 0..<3 { rgba[4 * (y * 400 + x) + c] = 0 } }
      }
      try PNGCodec.writeRGB(
        DecodedImage(width: 400, height: 100, hasAlpha: false, rgba: rgba),
        to: folder.appendingPathComponent("marker.png"))
      let catalog = try Catalog(quotes: [Quote(text: "Calm", author: "")], pictures: ["marker.png"], directory: folder)
      let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
      let image = try PNGCodec.decode(try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1)).bytes)
      var minX = Int.max, minY = Int.max, maxX = Int.min, maxY = Int.min
      for y in 0..<200 {
        for x in 0..<image.width where image.luma(x, y) < 128 {
          minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
      }
      let scale = 6.3
      #expect(abs(Double(minX) - (150 * scale - 660)) <= 2, "left \(minX)")
      #expect(abs(Double(maxX + 1) - (170 * scale - 660)) <= 2, "right \(maxX + 1)")
      #expect(abs(Double(minY) - 5 * scale) <= 2, "top \(minY)")
      #expect(abs(Double(maxY + 1) - 25 * scale) <= 2, "bottom \(maxY + 1)")
      #expect(abs((maxX - minX) - (maxY - minY)) <= 2, "the square came out \(maxX - minX + 1) x \(maxY - minY + 1)")
      // No bars: the canvas edges are the (white) picture.
      for x in stride(from: 0, to: image.width, by: 7) {
        #expect(image.luma(x, 0) > 250 || (x >= 280 && x <= 420), "top row at \(x)")
        #expect(image.luma(x, image.height - 1) > 250, "bottom row at \(x)")
      }
      for y in stride(from: 0, to: image.height, by: 7) {
        #expect(image.luma(0, y) > 250 && image.luma(image.width - 1, y) > 250)
      }
    }
  }

  // MARK: Pictures that fail late

  @Test func pictureWithAValidHeaderButBrokenBodyIsUndecodable() throws {
    try withTemporaryFolder("innerpeace-broken") { folder in
      // A PNG signature and IHDR, then garbage: the chunk walk at load finds it (bad CRC, no
      // IEND), so it never gets as far as a render.
      var bytes = pngSignature
      bytes += [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 1, 0, 0, 0, 1, 0, 8, 2, 0, 0, 0] + [1, 2, 3, 4]
      bytes += [UInt8](repeating: 0x5A, count: 200)
      try folder.writeBytes(bytes, to: "broken.png")
      let error = innerPeaceError {
        try Catalog(quotes: [Quote(text: "Calm", author: "")], pictures: ["broken.png"], directory: folder)
      }
      guard case .pictureUndecodable(let name, _)? = error else {
        Issue.record("expected pictureUndecodable, got \(String(describing: error))")
        return
      }
      #expect(name == "broken.png")
    }
  }

  @Test func everyBundledPictureDecodesAndCovers() throws {
    let size = Preset.custom(try CanvasSize(width: 240, height: 240))
    for picture in Fixtures.catalog.pictures {
      let card = try renderer.render(CardRequest(preset: size, quote: .index(1), picture: .named(picture), seed: 1))
      #expect(card.picture == picture)
      let image = try PNGCodec.decode(card.bytes)
      #expect(image.width == 240 && image.height == 240)
    }
  }

  // MARK: Background cache

  @Test func cacheKeepsOneBackgroundPerPictureAndSize() throws {
    let renderer = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 64 << 20)
    #expect(renderer.cachedBackgroundCount == 0)
    let request = CardRequest(preset: .og, quote: .index(2), picture: .named("garden.jpg"), seed: 3)
    let first = try renderer.render(request)
    let second = try renderer.render(request)
    #expect(renderer.cachedBackgroundCount == 1)
    #expect(first.bytes == second.bytes)
    #expect(second.timings.decode == 0 && second.timings.scale == 0, "the second render decoded again")
    #expect(first.timings.decode > 0)
    // Another size of the same picture is another entry; a transparent card needs none.
    _ = try renderer.render(
      CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), picture: .named("garden.jpg"), seed: 3))
    #expect(renderer.cachedBackgroundCount == 2)
    _ = try renderer.render(CardRequest(preset: .og, seed: 3, transparent: true))
    #expect(renderer.cachedBackgroundCount == 2)
  }

  @Test func zeroByteCacheKeepsNothing() throws {
    let renderer = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 0)
    let request = CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), seed: 3)
    _ = try renderer.render(request)
    _ = try renderer.render(request)
    #expect(renderer.cachedBackgroundCount == 0)
  }

  @Test func cacheStaysWithinItsBudget() throws {
    // 300 x 200 x 4 = 240,000 bytes a background: a 500,000-byte cache holds two.
    let renderer = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 500_000)
    let size = Preset.custom(try CanvasSize(width: 300, height: 200))
    for picture in Fixtures.catalog.pictures.prefix(4) {
      _ = try renderer.render(CardRequest(preset: size, picture: .named(picture), seed: 1))
    }
    #expect(renderer.cachedBackgroundCount == 2)
  }

  /// A background larger than half the cache is drawn but not kept, so one large card cannot
  /// empty the cache of everyday sizes; the card it makes is the same as with a cache.
  @Test func largeBackgroundIsNotKept() throws {
    // 300 x 200 x 4 = 240,000 bytes; 400 x 300 x 4 = 480,000, over half of 600,000.
    let renderer = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 600_000)
    let small = CardRequest(
      preset: .custom(try CanvasSize(width: 300, height: 200)), picture: .named("garden.jpg"), seed: 1)
    let large = CardRequest(
      preset: .custom(try CanvasSize(width: 400, height: 300)), picture: .named("garden.jpg"), seed: 1)
    _ = try renderer.render(small)
    let first = try renderer.render(large)
    let second = try renderer.render(large)
    #expect(renderer.cachedBackgroundCount == 1, "only the small background is kept")
    #expect(second.timings.decode > 0, "the large background was decoded again")
    #expect(first.bytes == second.bytes)
    let uncached = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 0)
    #expect(try uncached.render(large).bytes == first.bytes)
  }
}
