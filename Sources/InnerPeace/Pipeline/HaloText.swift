internal import CInnerPeace
internal import CInnerPeaceKernels
import Foundation

/// Draws fitted text the way the app did: white, over five stacked black shadows of zero offset,
/// blurred 2, 4, 6, 8 and 10 pt, in a text image 30 pt larger than the text on every side.
///
/// Memory: the text's coverage (one byte a pixel of that image), two blur buffers and the shadow
/// mask; the text itself is drawn straight onto the canvas.
enum HaloText {
  static func draw(_ fitted: FittedText, geometry: CardGeometry, on canvas: ImageSurface, timings: inout StageTimings)
    throws(InnerPeaceError)
  {
    let clock = ContinuousClock()
    var start = clock.now
    // The text image: the text's rectangle grown by the halo margin, clipped to the canvas. Past
    // the widest blur's reach the halo is exactly zero, so the margin stops there when that is
    // nearer than the app's 30 pt: same pixels, less to blur and composite.
    let reach =
      geometry.shadowSigmas.map { sigma in
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
    let alpha = try { () throws(InnerPeaceError) -> [UInt8] in
      let coverage = try ImageSurface(format: .a8, width: width, height: height)
      let coverageContext = try DrawingContext(surface: coverage)
      draw(fitted, in: coverageContext, offsetX: Double(left), offsetY: Double(top))
      try coverageContext.check()
      return coverage.packedRows(bytesPerRow: width)
    }()
    timings.draw += seconds(clock.now - start)

    // 2. The coverage, blurred once per shadow, stacked into one shadow mask.
    start = clock.now
    let shadow = Blur.shadow(of: consume alpha, width: width, height: height, sigmas: geometry.shadowSigmas)
    timings.blur += seconds(clock.now - start)

    // 3. Shadows in black through the mask, then the text over them.
    start = clock.now
    let mask = try ImageSurface(format: .a8, width: width, height: height)
    mask.replaceRows(with: consume shadow, bytesPerRow: width)
    let context = try DrawingContext(surface: canvas)
    cairo_set_source_rgb(context.handle, 0, 0, 0)
    cairo_mask_surface(context.handle, mask.handle, Double(left), Double(top))
    // Then the text itself, white (colour emoji keep their colours), clipped to the same
    // rectangle. Drawn straight onto the canvas it gives the same pixels as a colour text layer
    // painted over it, without that layer.
    cairo_rectangle(context.handle, Double(left), Double(top), Double(width), Double(height))
    cairo_clip(context.handle)
    cairo_set_source_rgb(context.handle, 1, 1, 1)
    draw(fitted, in: context, offsetX: 0, offsetY: 0)
    try context.check()
    canvas.flush()
    timings.draw += seconds(clock.now - start)
  }

  /// Draws the quote and author lines, in the context's source, shifted by minus the offsets.
  private static func draw(_ fitted: FittedText, in context: DrawingContext, offsetX: Double, offsetY: Double) {
    fitted.quote.draw(in: context, x: fitted.quoteOrigin.x - offsetX, y: fitted.quoteOrigin.y - offsetY)
    fitted.author?.draw(in: context, x: fitted.authorOrigin.x - offsetX, y: fitted.authorOrigin.y - offsetY)
  }
}
