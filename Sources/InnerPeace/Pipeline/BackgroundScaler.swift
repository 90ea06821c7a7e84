/// Scales a photo to cover a canvas: scaled until both sides cover it, centred, the overflow
/// cropped evenly, never stretched.
enum BackgroundScaler {
  /// Paints `source`, scaled to cover it, over the whole of `canvas` (an RGB24 surface).
  static func cover(_ source: Pixels, onto canvas: ImageSurface) throws(InnerPeaceError) {
    if source.width == canvas.width && source.height == canvas.height {
      source.copy(into: canvas)
      return
    }
    let scale = max(Double(canvas.width) / Double(source.width), Double(canvas.height) / Double(source.height))
    let context = try DrawingContext(surface: canvas)
    try context.paint(
      source, scale: scale, x: (Double(canvas.width) - Double(source.width) * scale) / 2,
      y: (Double(canvas.height) - Double(source.height) * scale) / 2)
    canvas.flush()
  }
}
