internal import CInnerPeace

/// Scales a photo to cover a canvas: scaled until both sides cover it, centred, the overflow
/// cropped evenly, never stretched.
enum BackgroundScaler {
  static func cover(_ source: Pixels, to size: CanvasSize) throws(InnerPeaceError) -> Pixels {
    if source.width == size.width && source.height == size.height { return source }
    let target = try ImageSurface(format: .rgb24, width: size.width, height: size.height)
    let context = try DrawingContext(surface: target)
    var bytes = source.bytes
    try bytes.withUnsafeMutableBufferPointer { (buffer) throws(InnerPeaceError) in
      let sourceSurface = cairo_image_surface_create_for_data(
        buffer.baseAddress, CAIRO_FORMAT_RGB24, Int32(source.width), Int32(source.height), Int32(source.stride))!
      defer { cairo_surface_destroy(sourceSurface) }
      let scale = max(Double(size.width) / Double(source.width), Double(size.height) / Double(source.height))
      let cr = context.handle
      cairo_translate(
        cr, (Double(size.width) - Double(source.width) * scale) / 2,
        (Double(size.height) - Double(source.height) * scale) / 2)
      cairo_scale(cr, scale, scale)
      cairo_set_source_surface(cr, sourceSurface, 0, 0)
      let pattern = cairo_get_source(cr)
      // Pad, so the bilinear filter does not pull black in at the edges.
      cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
      cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
      cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
      cairo_paint(cr)
      try context.check()
    }
    target.flush()
    let rowBytes = size.width * 4
    let result = [UInt8](unsafeUninitializedCapacity: rowBytes * size.height) { buffer, count in
      for row in 0..<size.height {
        (buffer.baseAddress! + row * rowBytes).update(from: target.data + row * target.stride, count: rowBytes)
      }
      count = buffer.count
    }
    return Pixels(width: size.width, height: size.height, bytes: result)
  }
}
