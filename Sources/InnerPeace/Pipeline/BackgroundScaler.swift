internal import CInnerPeace

/// Scales a photo to cover a canvas: scaled until both sides cover it, centred, the overflow
/// cropped evenly, never stretched.
enum BackgroundScaler {
  /// Paints `source`, scaled to cover it, over the whole of `canvas` (an RGB24 surface).
  static func cover(_ source: Pixels, onto canvas: ImageSurface) throws(InnerPeaceError) {
    if source.width == canvas.width && source.height == canvas.height {
      source.copy(into: canvas)
      return
    }
    let context = try DrawingContext(surface: canvas)
    // Cairo only reads a source surface: no mutable copy of the photo is needed.
    try source.bytes.withUnsafeBufferPointer { (buffer) throws(InnerPeaceError) in
      let sourceSurface = try ImageSurface(
        wrapping: UnsafeMutablePointer(mutating: buffer.baseAddress!), format: .rgb24, width: source.width,
        height: source.height,
        stride: source.stride)
      let scale = max(Double(canvas.width) / Double(source.width), Double(canvas.height) / Double(source.height))
      let cr = context.handle
      cairo_translate(
        cr, (Double(canvas.width) - Double(source.width) * scale) / 2,
        (Double(canvas.height) - Double(source.height) * scale) / 2)
      cairo_scale(cr, scale, scale)
      cairo_set_source_surface(cr, sourceSurface.handle, 0, 0)
      let pattern = cairo_get_source(cr)
      // Pad, so the bilinear filter does not pull black in at the edges.
      cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
      cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
      cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
      cairo_paint(cr)
      try context.check()
      // The source surface borrows the photo's bytes: release Cairo's hold on it before they go.
      cairo_set_source_rgb(cr, 0, 0, 0)
    }
    canvas.flush()
  }
}

extension Pixels {
  /// The pixels of an RGB24 surface, rows packed.
  init(copying surface: ImageSurface) {
    self.init(
      width: surface.width, height: surface.height, bytes: surface.packedRows(bytesPerRow: surface.width * 4))
  }

  /// Copies the pixels over an RGB24 surface of the same size.
  func copy(into surface: ImageSurface) { surface.replaceRows(with: bytes, bytesPerRow: stride) }
}
