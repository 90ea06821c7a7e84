public import Foundation
import InnerPeaceResources

/// Renders quote cards. Create one and share it: a render is one synchronous call on the calling
/// thread, safe to make from several threads at once. Every Cairo and Pango object lives and
/// dies inside one render; only the decoded backgrounds are kept, in a bounded cache.
///
/// The pipeline, top to bottom: select → fit text → background → halo text → encode.
public final class CardRenderer: Sendable {
  public let catalog: Catalog
  let fontPath: String
  private let backgrounds: BackgroundCache

  /// - Parameters:
  ///   - catalog: the quotes and pictures to choose from.
  ///   - fontsDirectory: the folder with the bundled font; `nil` uses the package's `Fonts/`.
  ///   - backgroundCacheBytes: how much decoded, scaled background to keep (0 keeps none).
  /// - Throws: ``InnerPeaceError/fontsUnavailable(reason:)`` when the bundled font is missing.
  public init(catalog: Catalog, fontsDirectory: URL? = nil, backgroundCacheBytes: Int = 192 << 20)
    throws(InnerPeaceError)
  {
    self.catalog = catalog
    self.fontPath = try FontSetup.register(fontsDirectory: fontsDirectory ?? BundledResources.fontsDirectory)
    self.backgrounds = BackgroundCache(capacityBytes: backgroundCacheBytes)
  }

  /// Renders one card.
  /// - Throws: ``InnerPeaceError`` for a bad request (index out of range, unknown picture, invalid
  ///   text, JPEG with transparency) or a failed decode, draw or encode.
  public func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    try render(request, encoderThreads: 1)
  }

  /// Renders one card, its PNG encoded on `encoderThreads` threads (1 or 2; the same bytes either
  /// way: two when a core would otherwise sit idle).
  /// - Throws: as ``render(_:)``.
  public func render(_ request: CardRequest, encoderThreads: Int) throws(InnerPeaceError) -> RenderedCard {
    try render(
      request, selection: try Selection(request, catalog: catalog), prefetch: nil, probe: nil,
      encoderThreads: encoderThreads)
  }

  /// Renders one card with a renderer made for it, on two threads: the photo is read, checked and
  /// decoded on a second thread while this one registers the fonts and fits the text, and the
  /// PNG encoder shares its work with a second thread. For a command that renders one card and
  /// exits: the card is the same, byte for byte, as `CardRenderer(...).render(request)` makes.
  /// - Parameters:
  ///   - catalog: the quotes and pictures to choose from.
  ///   - fontsDirectory: the folder with the bundled font; `nil` uses the package's `Fonts/`.
  /// - Throws: as ``init(catalog:fontsDirectory:backgroundCacheBytes:)`` and ``render(_:)``.
  public static func renderOne(_ request: CardRequest, catalog: Catalog, fontsDirectory: URL? = nil)
    throws(InnerPeaceError) -> RenderedCard
  {
    let selection = try Selection(request, catalog: catalog)
    let canvas = request.preset.geometry.canvas
    let prefetch =
      request.transparent
      ? nil : PhotoPrefetch(catalog: catalog, name: selection.pictureName, canvas: (canvas.width, canvas.height))
    // Joined before returning, whatever happens.
    defer { _ = prefetch?.finish() }
    let renderer = try CardRenderer(catalog: catalog, fontsDirectory: fontsDirectory, backgroundCacheBytes: 0)
    return try renderer.render(request, selection: selection, prefetch: prefetch, probe: nil)
  }

  /// What a request draws: the quote and the picture, chosen and checked.
  struct Selection {
    let quoteIndex: Int?
    let quote: Quote
    let pictureName: String

    /// Chooses as the request says: two draws from the seed, always in this order, so choosing
    /// one explicitly does not change the other; then checks the format against transparency.
    init(_ request: CardRequest, catalog: Catalog) throws(InnerPeaceError) {
      let (randomQuote, randomPictureName) = catalog.randomChoice(seed: request.seed)
      switch request.quote {
      case .random:
        quoteIndex = randomQuote
        quote = catalog.quotes[randomQuote]
      case .index(let index):
        guard catalog.quotes.indices.contains(index) else {
          throw .quoteIndexOutOfRange(index: index, count: catalog.quotes.count)
        }
        quoteIndex = index
        quote = catalog.quotes[index]
      case .text(let text, let author):
        quoteIndex = nil
        let tidied = Quote(text: try TextRules.quote(text), author: try TextRules.author(author ?? ""))
        // The card and its share message carry the same text: the one drawn.
        quote =
          request.typographicPunctuation
          ? Quote(text: Punctuation.typographic(tidied.text), author: Punctuation.typographic(tidied.author))
          : tidied
      }
      switch request.picture {
      case .random: pictureName = randomPictureName
      case .named(let name): pictureName = try catalog.pictureName(matching: name)
      }
      try request.format.validate(transparent: request.transparent)
    }
  }

  /// Renders one card, and hands `probe` what the halo stage saw and chose and `canvas` the finished
  /// canvas before it is encoded (for tests).
  func render(
    _ request: CardRequest, probe: ((HaloProbe) -> Void)?, canvas inspect: ((ImageSurface) -> Void)? = nil
  ) throws(InnerPeaceError) -> RenderedCard {
    try render(
      request, selection: try Selection(request, catalog: catalog), prefetch: nil, probe: probe, canvas: inspect)
  }

  /// Renders the card of `request`, which chose `selection`; with `prefetch`, the photo that
  /// another thread has been reading since the selection.
  private func render(
    _ request: CardRequest, selection: Selection, prefetch: PhotoPrefetch?, probe: ((HaloProbe) -> Void)?,
    canvas inspect: ((ImageSurface) -> Void)? = nil, encoderThreads: Int = 1
  ) throws(InnerPeaceError) -> RenderedCard {
    let geometry = request.preset.geometry
    let clock = StageClock()
    let (quoteIndex, quote, pictureName) = (selection.quoteIndex, selection.quote, selection.pictureName)

    // Fit the text.
    let fitted = clock.measure(.fit) {
      let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: fontPath))
      let fitter = TextFitter(geometry: geometry, alignment: request.alignment, language: request.language)
      return fitter.fit(
        quote: quote.text, author: request.showsAuthor ? quote.author : "", context: context, family: FontSetup.family)
    }
    // Read from the layouts as placed, before anything is drawn; only when asked.
    let report = request.includesReport ? TypesetReport(fitted, preset: request.preset) : nil

    // Background: the photo scaled to cover the canvas (cached), cropped to keep its subject clear
    // of the text block, or transparent.
    let canvas = try ImageSurface(
      format: request.transparent ? .argb32 : .rgb24, width: geometry.canvas.width, height: geometry.canvas.height)
    // renderOne's background, painted on another thread while this one makes the halo's text
    // image; its stages' times. Joined before returning, whatever happens.
    var painting: BackgroundWork<Result<StageTimings, InnerPeaceError>>?
    defer { _ = painting?.wait() }
    var photo: (crop: FocusCrop, bytes: [UInt8]?)?
    if !request.transparent {
      // What another thread has read meanwhile, with the error it met, which the render meets
      // here as it would have on its own.
      let read = prefetch?.read()
      if let failure = read?.failure { throw failure }
      // A catalog that checks its photos when drawn reads and checks this one now: its size and
      // focus choose the crop, and its bytes are decoded as they were checked.
      var checked = read?.checked
      if checked == nil && catalog.pictureChecking == .whenDrawn {
        checked = try clock.measure(.decode) { () throws(InnerPeaceError) in try catalog.checkedPicture(pictureName) }
      }
      let crop = catalog.crop(
        for: pictureName, canvas: (canvas.width, canvas.height), block: fitted.block, detail: checked?.detail)
      let bytes = checked?.bytes ?? read?.bytes
      if let prefetch {
        // The crop is known: the background is painted on another thread from now on. A zoom that
        // needs another decoded size than the prefetch's decodes the bytes again there (only the
        // part the canvas shows, where it can be).
        let canvasSize = (width: canvas.width, height: canvas.height)
        let ownDecode = bytes.map { !Self.decodeAlike($0, Self.covering(canvasSize, crop), prefetch.covering) } ?? false
        let target = LentSurface(canvas)
        painting = BackgroundWork { [self] in
          let backgroundClock = StageClock()
          do throws(InnerPeaceError) {
            try paintBackground(
              named: pictureName, crop: crop, on: target.surface, clock: backgroundClock, bytes: bytes,
              prefetch: ownDecode ? nil : prefetch)
            return .success(backgroundClock.timings)
          } catch {
            return .failure(error)
          }
        }
      } else {
        photo = (crop, bytes)
      }
    }
    // While another thread decodes and paints the photo, the halo's text image, which the photo
    // plays no part in, is made first.
    let halo =
      prefetch == nil
      ? nil
      : try HaloText.prepare(
        fitted, geometry: geometry, canvas: (canvas.width, canvas.height),
        keepsCoverage: !request.transparent || probe != nil, clock: clock)
    if let painting {
      let timings = try painting.wait().get()
      for (stage, seconds) in [
        (StageClock.Stage.decode, timings.decode), (.scale, timings.scale), (.draw, timings.draw),
      ] {
        clock.add(seconds: seconds, to: stage)
      }
    } else if let photo {
      try paintBackground(named: pictureName, crop: photo.crop, on: canvas, clock: clock, bytes: photo.bytes)
    }

    // The halo text: text layer, its alpha blurred five times, shadows, then the text.
    try HaloText.draw(
      fitted, geometry: geometry, on: canvas, measuresContrast: !request.transparent, clock: clock, probe: probe,
      prepared: halo)

    if let inspect {
      canvas.flush()
      inspect(canvas)
    }
    let bytes = try clock.measure(.encode) { () throws(InnerPeaceError) in
      // renderOne's PNG encoder shares its bands with a second thread, and so does a render asked
      // to: the same bytes.
      let threads = prefetch == nil ? min(2, max(1, encoderThreads)) : 2
      return try ImageEncoding.encode(canvas, as: request.format, quality: request.quality, threads: threads)
    }

    return RenderedCard(
      bytes: bytes, format: request.format, size: geometry.canvas, quoteIndex: quoteIndex, quote: quote,
      picture: request.transparent ? nil : pictureName,
      shareMessage: quote.shareMessage, fontSize: fitted.quoteSize, truncated: fitted.truncated,
      layoutPasses: fitted.passes, timings: clock.timings, missingGlyphs: fitted.missingGlyphs,
      report: report)
  }

  /// The files of the fonts Pango picks for `text` on this thread, in order of use. Lets tests
  /// prove that the bundled font, not a look-alike installed on the machine, sets the quote.
  public func fontFiles(for text: String) -> [String] {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: fontPath))
    let layout = TextLayout(context: context, text: text, family: FontSetup.family)
    layout.setPixelSize(48)
    return layout.fontFiles
  }

  /// The path of the bundled quote font.
  public var bundledFontPath: String { fontPath }

  /// Fits a quote without drawing it, for tests and tools: the fitted size, whether it was
  /// truncated, the block's rectangle on the canvas (x, y, width, height), the layout passes,
  /// the quote's wrap width in pixels at the fitted size, and the text of each line of the quote
  /// and of the author line as set (U+2028 and trailing whitespace removed; no author, no lines).
  public func fitText(_ text: String, author: String, preset: Preset, alignment: TextAlignment = .natural)
    throws(InnerPeaceError) -> (
      fontSize: Int, truncated: Bool, block: (x: Double, y: Double, width: Double, height: Double), passes: Int,
      wrapWidth: Double, lines: [String], authorLines: [String]
    )
  {
    let quote = try TextRules.quote(text)
    let author = try TextRules.author(author)
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: fontPath))
    let fitted = TextFitter(geometry: preset.geometry, alignment: alignment).fit(
      quote: quote, author: author, context: context, family: FontSetup.family)
    let block = fitted.block
    // The fitter leaves the quote's layout in the state it was placed in.
    let wrapWidth = fitted.quote.wrapWidth ?? fitted.quote.bounds.width
    return (
      fitted.quoteSize, fitted.truncated, (block.x, block.y, block.width, block.height), fitted.passes,
      wrapWidth, fitted.quote.lineTexts, fitted.author?.lineTexts ?? []
    )
  }

  /// Fits the text as ``fitText(_:author:preset:alignment:)`` does, and also finds the largest
  /// candidate that fits by an exhaustive scan with the fitter's own measure, one layout per size
  /// (`nil` when none fits). For tests: the two must agree.
  func fitAndScan(
    _ text: String, author: String, preset: Preset, alignment: TextAlignment = .natural, scan: Bool = true
  ) throws(InnerPeaceError) -> (fitted: FittedText, scanned: Int?) {
    let quote = try TextRules.quote(text)
    let author = try TextRules.author(author)
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: fontPath))
    let fitter = TextFitter(geometry: preset.geometry, alignment: alignment)
    let sizes = preset.geometry.candidateSizes
    let scanned =
      scan
      ? fitter.makeMeasure(quote: quote, author: author, context: context, family: FontSetup.family)
        .scanForLargestFit(sizes).map { sizes[$0] } : nil
    let fitted = fitter.fit(quote: quote, author: author, context: context, family: FontSetup.family)
    return (fitted, scanned)
  }

  /// How many decoded backgrounds the cache holds.
  public var cachedBackgroundCount: Int { backgrounds.count }

  /// Paints the photo, scaled to cover the canvas and cropped as `crop` says, from the cache or
  /// decoded and scaled straight into the canvas (then kept, when the cache takes a background of
  /// that size). `bytes` are the photo's bytes when they have just been read and checked
  /// (``Catalog/checkedPicture(_:)``, ``Catalog/readPicture(_:)``); otherwise the file is read
  /// here. The decoded pixels come from `prefetch` when given (which then decoded the size the
  /// crop needs, whole), else from decoding the part here.
  private func paintBackground(
    named name: String, crop: FocusCrop, on canvas: ImageSurface, clock: StageClock, bytes: [UInt8]?,
    prefetch: PhotoPrefetch? = nil
  ) throws(InnerPeaceError) {
    let key = BackgroundCache.Key(picture: name, width: canvas.width, height: canvas.height, crop: crop)
    if let cached = backgrounds.pixels(for: key) {
      clock.measure(.draw) { cached.copy(into: canvas) }
      return
    }
    var decoded: DecodedPhoto? = try clock.measure(.decode) { () throws(InnerPeaceError) in
      if let prefetch, let prefetched = prefetch.decoded() {
        clock.add(seconds: prefetch.finish(), to: .decode)
        return DecodedPhoto(whole: prefetched)
      }
      // Not read yet, or read but not decoded (the decode here names the error). Only the part
      // the canvas shows is decoded where it can be: the same pixels there.
      let data: [UInt8]
      if let bytes { data = bytes } else { data = try catalog.readPicture(name) }
      return try Self.decodeShown(data, canvas: (canvas.width, canvas.height), crop: crop, name: name).get()
    }
    // Taken, so the decoded photo goes as soon as it is painted, before the cache copies the canvas.
    try clock.measure(.scale) { () throws(InnerPeaceError) in
      try BackgroundScaler.cover(decoded.take()!, onto: canvas, crop: crop)
    }
    if backgrounds.accepts(byteCount: canvas.width * canvas.height * 4) {
      backgrounds.store(Pixels(copying: canvas), for: key)
    }
  }

  /// Whether `bytes` decode to the same pixels to cover `one` as to cover `other`: the same
  /// covering, or the same decoded size (``ImageDecoding/decodedSize(_:covering:)``). False when
  /// they do not decode.
  private static func decodeAlike(
    _ bytes: [UInt8], _ one: (width: Int, height: Int), _ other: (width: Int, height: Int)
  ) -> Bool {
    if one == other { return true }
    guard case .success(let header) = ImageDecoding.inspect(bytes) else { return false }
    return ImageDecoding.decodedSize(header, covering: one) == ImageDecoding.decodedSize(header, covering: other)
  }

  /// The size a photo is decoded to cover for `crop` on `canvas`: large enough for its zoom too.
  private static func covering(_ canvas: (width: Int, height: Int), _ crop: FocusCrop) -> (width: Int, height: Int) {
    (Int((Double(canvas.width) * crop.zoom).rounded(.up)), Int((Double(canvas.height) * crop.zoom).rounded(.up)))
  }

  /// The photo `name`'s `bytes` decoded to cover `canvas` for `crop`: only the part the canvas
  /// shows where it can be (``ImageDecoding/decode(_:covering:part:)``,
  /// ``BackgroundScaler/shownPart(decoded:canvas:crop:)``); or the error naming the photo.
  private static func decodeShown(
    _ bytes: [UInt8], canvas: (width: Int, height: Int), crop: FocusCrop, name: String
  ) -> Result<DecodedPhoto, InnerPeaceError> {
    naming(name) { () throws(InnerPeaceError) in
      try ImageDecoding.decode(bytes, covering: covering(canvas, crop)) {
        BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
      }
    }
  }

  /// What `decode` gives, its decoding failure as the photo `name`'s.
  private static func naming<Value>(_ name: String, _ decode: () throws(InnerPeaceError) -> Value) -> Result<
    Value, InnerPeaceError
  > {
    do throws(InnerPeaceError) {
      return .success(try decode())
    } catch .decodingFailed(let reason) {
      return .failure(.pictureUndecodable(name: name, reason: reason))
    } catch {
      return .failure(error)
    }
  }
}
