import Foundation

/// Draws fitted text the way the app did: white, over five stacked black shadows of zero offset,
/// blurred 2, 4, 6, 8 and 10 pt at the app's 240 px start size and in proportion to the letters
/// at any other size (``CardGeometry/shadowSigmas(forQuoteSize:)``), in a text image up to 30 pt
/// larger than the text on every side. Over a bright photo the shadow is deepened just enough
/// for the letters to keep their contrast (``HaloContrast``).
///
/// Memory: the text's coverage (one byte a pixel of that image), two blur buffers and the shadow
/// mask; the text itself is drawn straight onto the canvas.
enum HaloText {
  /// - Parameters:
  ///   - measuresContrast: deepen the halo where the canvas behind the text is bright (off for a
  ///     transparent card, which has no photo to measure).
  ///   - clock: the render's clock: drawing counts as `draw`, blurring and measuring as `blur`.
  ///   - probe: called with what the stage saw and chose, for tests.
  static func draw(
    _ fitted: FittedText, geometry: CardGeometry, on canvas: ImageSurface, measuresContrast: Bool,
    clock: StageClock, probe: ((HaloProbe) -> Void)? = nil
  )
    throws(InnerPeaceError)
  {
    let sigmas = geometry.shadowSigmas(forQuoteSize: Double(fitted.quoteSize))
    // The text image: the text's rectangle grown by the halo margin, clipped to the canvas. Past
    // the widest blur's reach the halo is exactly zero, so the margin stops there when that is
    // nearer than the app's 30 pt: same pixels, less to blur and composite.
    let reach =
      sigmas.map { sigma in
        max(Blur.boxRadii(sigma: sigma).reduce(0, +), 2 * Blur.boxRadii(sigma: sigma / 2).reduce(0, +) + 1) + 2
      }.max() ?? 0
    let margin = Double(min(geometry.haloMargin, reach))
    let left = max(0, Int((fitted.block.x - margin).rounded(.down)))
    let top = max(0, Int((fitted.block.y - margin).rounded(.down)))
    let right = min(canvas.width, Int((fitted.block.maxX + margin).rounded(.up)))
    let bottom = min(canvas.height, Int((fitted.block.maxY + margin).rounded(.up)))
    let width = right - left
    let height = bottom - top
    guard width > 0, height > 0 else { return }

    // 1. The text's coverage, in an 8-bit layer (a quarter of a colour layer's memory), copied
    // out with rows packed; the layer goes at the end of this scope.
    var drawnCoverage: [UInt8]? = try clock.measure(.draw) { () throws(InnerPeaceError) in
      let coverage = try ImageSurface(format: .a8, width: width, height: height)
      let coverageContext = try DrawingContext(surface: coverage)
      draw(fitted, in: coverageContext, offsetX: Double(left), offsetY: Double(top))
      try coverageContext.check()
      return coverage.packedRows(bytesPerRow: width)
    }

    // 2. The coverage, blurred once per shadow, stacked into one shadow mask, deepened where the
    // photo under the text is bright.
    var shadow: [UInt8] = []
    let strengths = clock.measure(.blur) { () -> (quote: HaloStrength, author: HaloStrength) in
      // Taken, not copied: the blur works in the coverage's own buffer when nothing else keeps it.
      let alpha = drawnCoverage.take()!
      let keepsCoverage = measuresContrast || probe != nil
      let coverage = keepsCoverage ? alpha : []
      shadow = Blur.shadow(of: consume alpha, width: width, height: height, sigmas: sigmas)
      var authorRow: Int?
      if let author = fitted.author {
        authorRow = min(height, max(0, Int((fitted.authorOrigin.y + author.bounds.y).rounded(.down)) - top))
      }
      var strengths = (quote: HaloStrength.plain, author: HaloStrength.plain)
      if measuresContrast {
        canvas.flush()
        strengths = HaloContrast.strengths(
          coverage: coverage, shadow: shadow, width: width, height: height,
          background: UnsafePointer(canvas.data + top * canvas.stride + 4 * left), stride: canvas.stride,
          authorRow: authorRow, quoteSize: fitted.quoteSize)
        HaloContrast.deepen(
          &shadow, width: width, height: height, quote: strengths.quote, author: strengths.author,
          authorRow: authorRow, ramp: Int((sigmas.last ?? 0) * 2))
      }
      if let probe {
        canvas.flush()
        probe(
          HaloProbe(
            left: left, top: top, width: width, height: height, coverage: coverage, authorRow: authorRow,
            quoteStrength: strengths.quote, authorStrength: strengths.author,
            background: HaloProbe.copy(canvas, left: left, top: top, width: width, height: height)))
      }
      return strengths
    }

    // 3. Shadows in black through the mask, then the text over them.
    try clock.measure(.draw) { () throws(InnerPeaceError) in
      let mask = try ImageSurface(mask: shadow, width: width, height: height)
      shadow = []  // the mask holds it now
      let context = try DrawingContext(surface: canvas)
      context.setSource(red: 0, green: 0, blue: 0)
      // Over a photo too bright for the halo alone, first a light scrim, feathered over most of a
      // line's height so it reads as a shade, not a box.
      let scrimOpacity = max(strengths.quote.scrim, strengths.author.scrim)
      let ringReach = Double(HaloContrast.ringRadius + 1)
      if let scrim = HaloContrast.scrim(
        opacity: scrimOpacity,
        block: PixelRect(
          x: fitted.block.x - ringReach, y: fitted.block.y - ringReach, width: fitted.block.width + 2 * ringReach,
          height: fitted.block.height + 2 * ringReach),
        feather: max(margin, Double(fitted.quoteSize)), canvasWidth: canvas.width, canvasHeight: canvas.height)
      {
        let scrimSurface = try ImageSurface(mask: scrim.mask, width: scrim.width, height: scrim.height)
        context.paint(through: scrimSurface, x: Double(scrim.left), y: Double(scrim.top))
      }
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

  /// Draws the quote and author lines, in the context's source, shifted by minus the offsets.
  private static func draw(_ fitted: FittedText, in context: DrawingContext, offsetX: Double, offsetY: Double) {
    fitted.quote.draw(in: context, x: fitted.quoteOrigin.x - offsetX, y: fitted.quoteOrigin.y - offsetY)
    fitted.author?.draw(in: context, x: fitted.authorOrigin.x - offsetX, y: fitted.authorOrigin.y - offsetY)
  }
}
