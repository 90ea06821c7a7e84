import Foundation

/// Draws fitted text the way the app did: white, over five stacked black shadows of zero offset,
/// blurred 2, 4, 6, 8 and 10 pt at the app's 240 px start size and in proportion to the letters
/// at any other size (``CardGeometry/shadowSigmas(forQuoteSize:)``), in a text image up to 30 pt
/// larger than the text on every side. Over a bright photo the shadow is deepened just enough
/// for the letters to keep their contrast (``HaloContrast``), close to the glyphs only; where
/// the plain glow stacked as far as it goes is not enough, it is first widened
/// (``widening``), then deepened, and a light shade hugging the letters takes the rest.
///
/// Memory: the text's coverage (one byte a pixel of that image), two blur buffers and the shadow
/// mask; the text itself is drawn straight onto the canvas.
enum HaloText {
  /// - Parameters:
  ///   - measuresContrast: deepen the halo where the canvas behind the text is bright (off for a
  ///     transparent card, which has no photo to measure).
  ///   - clock: the render's clock: drawing counts as `draw`, blurring and measuring as `blur`.
  ///   - probe: called with what the stage saw and chose, for tests.
  ///   - prepared: the text image ``prepare(_:geometry:canvas:keepsCoverage:clock:)`` made for
  ///     this text and canvas, when it was made before the photo was painted; made here otherwise.
  static func draw(
    _ fitted: FittedText, geometry: CardGeometry, on canvas: ImageSurface, measuresContrast: Bool,
    clock: StageClock, probe: ((HaloProbe) -> Void)? = nil, prepared: Prepared? = nil
  )
    throws(InnerPeaceError)
  {
    let sigmas = geometry.shadowSigmas(forQuoteSize: Double(fitted.quoteSize))
    let keepsCoverage = measuresContrast || probe != nil
    let size = (canvas.width, canvas.height)
    let plain: Prepared
    if let prepared {
      plain = prepared
    } else {
      plain = try prepare(fitted, geometry: geometry, canvas: size, keepsCoverage: keepsCoverage, clock: clock)
    }
    guard var image = plain.image else { return }
    var strengths = (quote: HaloStrength.plain, author: HaloStrength.plain)
    if measuresContrast {
      strengths = clock.measure(.blur) { image.strengths(on: canvas, quoteSize: fitted.quoteSize, proximity: nil) }
      // Too bright for the plain glow stacked alone: widen it before deepening it, so the glow
      // stays soft on small letters (its margin grows to hold the wider blur's whole reach).
      var widened = false
      if widens(strengths, geometry: geometry) {
        let wide = sigmas.map { $0 * widening }
        if let wider = try shade(fitted, sigmas: wide, marginCap: .max, canvas: size, keepsCoverage: true, clock: clock)
        {
          image = wider
          widened = true
        }
      }
      if strengths.quote != .plain || strengths.author != .plain {
        clock.measure(.blur) {
          // Deepened next to the glyphs only: the photo between the lines keeps its colours,
          // and no shade shows where there are no letters.
          let proximity = HaloContrast.proximity(image.coverage, width: image.width, height: image.height)
          // The strengths found for full proximity hold, scaled by the ring's least proximity,
          // for the same shadow; a widened one is judged again.
          strengths =
            widened
            ? image.strengths(on: canvas, quoteSize: fitted.quoteSize, proximity: proximity)
            : (HaloContrast.scaled(strengths.quote), HaloContrast.scaled(strengths.author))
          HaloContrast.deepen(
            &image.shadow, proximity: proximity, width: image.width, height: image.height, quote: strengths.quote,
            author: strengths.author, authorRow: image.authorRow, ramp: Int((image.sigmas.last ?? 0) * 2))
        }
      }
    }
    let (left, top, width, height) = (image.left, image.top, image.width, image.height)
    if let probe {
      canvas.flush()
      probe(
        HaloProbe(
          left: left, top: top, width: width, height: height, coverage: image.coverage, authorRow: image.authorRow,
          quoteStrength: strengths.quote, authorStrength: strengths.author,
          background: HaloProbe.copy(canvas, left: left, top: top, width: width, height: height)))
    }

    // 3. Shadows in black through the mask, then the text over them.
    var shadow = image.shadow
    image.shadow = []
    try clock.measure(.draw) { () throws(InnerPeaceError) in
      let mask = try ImageSurface(mask: shadow, width: width, height: height)
      shadow = []  // the mask holds it now
      let context = try DrawingContext(surface: canvas)
      context.setSource(red: 0, green: 0, blue: 0)
      context.paint(through: mask, x: Double(left), y: Double(top))
      // Then the text itself, white (colour emoji keep their colours), clipped to the same
      // rectangle. Drawn straight onto the canvas it gives the same pixels as a colour text layer
      // painted over it, without that layer.
      context.clip(x: Double(left), y: Double(top), width: Double(width), height: Double(height))
      context.setSource(red: 1, green: 1, blue: 1)
      draw(fitted, in: context, offsetX: 0, offsetY: 0)
      try context.check()
      canvas.flush()
    }
  }

  /// The text image of the plain halo, made from the text alone: the canvas's pixels play no
  /// part, so it can be made before (or while) the photo is painted.
  struct Prepared {
    /// `nil` when the text image is empty (nothing to draw).
    let image: TextImage?
  }

  /// Draws the text's coverage and blurs it into the plain stacked shadow, for a canvas of
  /// `canvas` pixels; ``draw(_:geometry:on:measuresContrast:clock:probe:prepared:)`` goes on
  /// from it. `keepsCoverage`: keep the coverage too (to measure the contrast, or for a probe).
  static func prepare(
    _ fitted: FittedText, geometry: CardGeometry, canvas: (width: Int, height: Int), keepsCoverage: Bool,
    clock: StageClock
  ) throws(InnerPeaceError) -> Prepared {
    let sigmas = geometry.shadowSigmas(forQuoteSize: Double(fitted.quoteSize))
    return Prepared(
      image: try shade(
        fitted, sigmas: sigmas, marginCap: geometry.haloMargin, canvas: canvas, keepsCoverage: keepsCoverage,
        clock: clock))
  }

  /// How much wider the halo's blurs get over a photo too bright for the plain glow.
  static let widening = 1.25

  /// Whether the halo is widened: the plain glow, stacked as far as it goes, still leaves the
  /// letters short of contrast (a shade would be needed). `classic` keeps the app's blur.
  static func widens(_ strengths: (quote: HaloStrength, author: HaloStrength), geometry: CardGeometry) -> Bool {
    !geometry.keepsAppHalo && (strengths.quote.scrim > 0 || strengths.author.scrim > 0)
  }

  /// The text image: its rectangle on the canvas, the text's coverage there (when kept), the
  /// plain stacked shadow, the first row of the author line, and the blurs it was made with.
  struct TextImage {
    var left: Int
    var top: Int
    var width: Int
    var height: Int
    var coverage: [UInt8]
    var shadow: [UInt8]
    var authorRow: Int?
    var sigmas: [Double]

    /// The strengths that bring the text to its contrast over the canvas under this image.
    func strengths(on canvas: ImageSurface, quoteSize: Int, proximity: [UInt8]?) -> (
      quote: HaloStrength, author: HaloStrength
    ) {
      canvas.flush()
      return HaloContrast.strengths(
        coverage: coverage, shadow: shadow, width: width, height: height,
        background: UnsafePointer(canvas.data + top * canvas.stride + 4 * left), stride: canvas.stride,
        authorRow: authorRow, quoteSize: quoteSize, proximity: proximity)
    }
  }

  /// Draws the text's coverage into a text image large enough for the halo of `sigmas` (at most
  /// `marginCap` pixels past the text on every side) and blurs it into the plain stacked shadow;
  /// `nil` when the image is empty.
  private static func shade(
    _ fitted: FittedText, sigmas: [Double], marginCap: Int, canvas: (width: Int, height: Int), keepsCoverage: Bool,
    clock: StageClock
  ) throws(InnerPeaceError) -> TextImage? {
    // The text image: the text's rectangle grown by the halo margin, clipped to the canvas. Past
    // the widest blur's reach the halo is exactly zero, so the margin stops there when that is
    // nearer than the app's 30 pt: same pixels, less to blur and composite.
    let reach =
      sigmas.map { sigma in
        max(Blur.boxRadii(sigma: sigma).reduce(0, +), 2 * Blur.boxRadii(sigma: sigma / 2).reduce(0, +) + 1) + 2
      }.max() ?? 0
    let margin = Double(min(marginCap, reach))
    let left = max(0, Int((fitted.block.x - margin).rounded(.down)))
    let top = max(0, Int((fitted.block.y - margin).rounded(.down)))
    let right = min(canvas.width, Int((fitted.block.maxX + margin).rounded(.up)))
    let bottom = min(canvas.height, Int((fitted.block.maxY + margin).rounded(.up)))
    let width = right - left
    let height = bottom - top
    guard width > 0, height > 0 else { return nil }

    // 1. The text's coverage, in an 8-bit layer (a quarter of a colour layer's memory), copied
    // out with rows packed; the layer goes at the end of this scope.
    var drawnCoverage: [UInt8]? = try clock.measure(.draw) { () throws(InnerPeaceError) in
      let coverage = try ImageSurface(format: .a8, width: width, height: height)
      let coverageContext = try DrawingContext(surface: coverage)
      draw(fitted, in: coverageContext, offsetX: Double(left), offsetY: Double(top))
      try coverageContext.check()
      return coverage.packedRows(bytesPerRow: width)
    }

    // 2. The coverage, blurred once per shadow, stacked into one shadow mask.
    return clock.measure(.blur) { () -> TextImage in
      // Taken, not copied: the blur works in the coverage's own buffer when nothing else keeps it.
      let alpha = drawnCoverage.take()!
      let coverage = keepsCoverage ? alpha : []
      let shadow = Blur.shadow(of: consume alpha, width: width, height: height, sigmas: sigmas)
      var authorRow: Int?
      if let author = fitted.author {
        authorRow = min(height, max(0, Int((fitted.authorOrigin.y + author.bounds.y).rounded(.down)) - top))
      }
      return TextImage(
        left: left, top: top, width: width, height: height, coverage: coverage, shadow: shadow,
        authorRow: authorRow, sigmas: sigmas)
    }
  }

  /// Draws the quote and author lines, in the context's source, shifted by minus the offsets.
  private static func draw(_ fitted: FittedText, in context: DrawingContext, offsetX: Double, offsetY: Double) {
    fitted.quote.draw(in: context, x: fitted.quoteOrigin.x - offsetX, y: fitted.quoteOrigin.y - offsetY)
    fitted.author?.draw(in: context, x: fitted.authorOrigin.x - offsetX, y: fitted.authorOrigin.y - offsetY)
  }
}
