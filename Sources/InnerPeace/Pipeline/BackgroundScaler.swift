/// Scales a photo to cover a canvas: scaled until both sides cover it (times the crop's zoom),
/// the overflow cropped where the crop says (``FocusCrop``; evenly for the centred crop), never
/// stretched.
enum BackgroundScaler {
  /// Paints `source`, scaled to cover it, over the whole of `canvas` (an RGB24 surface).
  static func cover(_ source: Pixels, onto canvas: ImageSurface, crop: FocusCrop = .centred)
    throws(InnerPeaceError)
  {
    if source.width == canvas.width && source.height == canvas.height && crop.zoom == 1 {
      source.copy(into: canvas)
      return
    }
    let scale =
      max(Double(canvas.width) / Double(source.width), Double(canvas.height) / Double(source.height)) * crop.zoom
    let context = try DrawingContext(surface: canvas)
    try context.paint(
      source, scale: scale, x: (Double(canvas.width) - Double(source.width) * scale) * crop.shiftX,
      y: (Double(canvas.height) - Double(source.height) * scale) * crop.shiftY)
    canvas.flush()
  }
}
