internal import CInnerPeace
internal import CInnerPeaceKernels
import Foundation

/// Draws fitted text the way the app did: white, over five stacked black shadows of zero offset,
/// blurred 2, 4, 6, 8 and 10 pt, in a text image 30 pt larger than the text on every side.
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

    // 1. The text, white, on a transparent layer (colour emoji keep their colours).
    let layer = try ImageSurface(format: .argb32, width: width, height: height)
    let layerContext = try DrawingContext(surface: layer)
    cairo_set_source_rgb(layerContext.handle, 1, 1, 1)
    fitted.quote.draw(in: layerContext, x: fitted.quoteOrigin.x - Double(left), y: fitted.quoteOrigin.y - Double(top))
    fitted.author?.draw(
      in: layerContext, x: fitted.authorOrigin.x - Double(left), y: fitted.authorOrigin.y - Double(top))
    try layerContext.check()
    layer.flush()
    timings.draw += seconds(clock.now - start)

    // 2. Its alpha, blurred once per shadow, stacked into one shadow mask.
    start = clock.now
    let alpha = [UInt8](unsafeUninitializedCapacity: width * height) { target, count in
      innerpeace_extract_alpha(layer.data, layer.stride, target.baseAddress, Int32(width), Int32(height))
      count = width * height
    }
    let shadow = Blur.shadow(of: alpha, width: width, height: height, sigmas: geometry.shadowSigmas)
    timings.blur += seconds(clock.now - start)

    // 3. Shadows in black through the mask, then the text layer over them.
    start = clock.now
    let mask = try ImageSurface(format: .a8, width: width, height: height)
    let maskStride = mask.stride
    shadow.withUnsafeBufferPointer { source in
      for y in 0..<height {
        (mask.data + y * maskStride).update(from: source.baseAddress! + y * width, count: width)
      }
    }
    mask.markDirty()
    let context = try DrawingContext(surface: canvas)
    cairo_set_source_rgb(context.handle, 0, 0, 0)
    cairo_mask_surface(context.handle, mask.handle, Double(left), Double(top))
    cairo_set_source_surface(context.handle, layer.handle, Double(left), Double(top))
    cairo_paint(context.handle)
    try context.check()
    canvas.flush()
    timings.draw += seconds(clock.now - start)
  }
}
