internal import CInnerPeace
internal import CInnerPeaceKernels

/// Owns one `cairo_surface_t` image surface; `deinit` destroys it.
final class ImageSurface {
  enum PixelFormat {
    /// 32-bit, premultiplied alpha, BGRA in memory on little-endian machines.
    case argb32
    /// 32-bit, alpha byte unused, BGRX in memory on little-endian machines.
    case rgb24
    /// 8-bit alpha only.
    case a8

    var cairo: cairo_format_t {
      switch self {
      case .argb32: CAIRO_FORMAT_ARGB32
      case .rgb24: CAIRO_FORMAT_RGB24
      case .a8: CAIRO_FORMAT_A8
      }
    }
  }

  let handle: OpaquePointer
  let width: Int
  let height: Int
  let format: PixelFormat

  /// Creates a zero-filled surface (transparent, or black for `rgb24`).
  init(format: PixelFormat, width: Int, height: Int) throws(InnerPeaceError) {
    let surface = cairo_image_surface_create(format.cairo, Int32(width), Int32(height))!
    try ImageSurface.check(surface)
    // Its pixels are written whole, after this (a large calloc maps pages it has not touched).
    innerpeace_advise_huge_pages(
      cairo_image_surface_get_data(surface), Int(cairo_image_surface_get_stride(surface)) * height)
    self.handle = surface
    self.width = width
    self.height = height
    self.format = format
  }

  /// A surface over pixels it does not own (Cairo's `create_for_data`). The caller keeps `data`
  /// alive and unmoved for the surface's whole life, and no Cairo object may keep the surface
  /// past it.
  init(wrapping data: UnsafeMutablePointer<UInt8>, format: PixelFormat, width: Int, height: Int, stride: Int)
    throws(InnerPeaceError)
  {
    let surface = cairo_image_surface_create_for_data(data, format.cairo, Int32(width), Int32(height), Int32(stride))!
    try ImageSurface.check(surface)
    self.handle = surface
    self.width = width
    self.height = height
    self.format = format
  }

  /// Takes ownership of a surface Cairo made (a decoded PNG, say), checking its status first.
  init(adopting surface: OpaquePointer) throws(InnerPeaceError) {
    try ImageSurface.check(surface)
    self.handle = surface
    self.width = Int(cairo_image_surface_get_width(surface))
    self.height = Int(cairo_image_surface_get_height(surface))
    switch cairo_image_surface_get_format(surface) {
    case CAIRO_FORMAT_ARGB32: self.format = .argb32
    case CAIRO_FORMAT_A8: self.format = .a8
    default: self.format = .rgb24
    }
  }

  private static func check(_ surface: OpaquePointer) throws(InnerPeaceError) {
    let status = cairo_surface_status(surface)
    if status != CAIRO_STATUS_SUCCESS {
      cairo_surface_destroy(surface)
      throw .renderFailed(reason: "cairo surface: \(String(cString: cairo_status_to_string(status)))")
    }
  }

  deinit { cairo_surface_destroy(handle) }

  /// Bytes per row.
  var stride: Int { Int(cairo_image_surface_get_stride(handle)) }

  /// The pixel bytes. Call ``flush()`` before reading what Cairo drew, and ``markDirty()`` after
  /// writing to them directly.
  var data: UnsafeMutablePointer<UInt8> { cairo_image_surface_get_data(handle)! }

  func flush() { cairo_surface_flush(handle) }
  func markDirty() { cairo_surface_mark_dirty(handle) }

  /// An 8-bit alpha surface holding `bytes` (`width` bytes a row, rows packed): a mask to paint
  /// through.
  convenience init(mask bytes: [UInt8], width: Int, height: Int) throws(InnerPeaceError) {
    try self.init(format: .a8, width: width, height: height)
    replaceRows(with: bytes, bytesPerRow: width)
  }

  /// The first `bytesPerRow` bytes of every row, rows packed (flushed first).
  func packedRows(bytesPerRow: Int) -> [UInt8] {
    flush()
    return [UInt8](unsafeUninitializedCapacity: bytesPerRow * height) { buffer, count in
      copyRows(
        height, bytesPerRow: bytesPerRow, from: data, stride: stride, to: buffer.baseAddress!, stride: bytesPerRow)
      count = bytesPerRow * height
    }
  }

  /// Overwrites the first `bytesPerRow` bytes of every row from `bytes` (rows packed), then marks
  /// the surface dirty.
  func replaceRows(with bytes: [UInt8], bytesPerRow: Int) {
    bytes.withUnsafeBufferPointer { source in
      copyRows(
        height, bytesPerRow: bytesPerRow, from: source.baseAddress!, stride: bytesPerRow, to: data, stride: stride)
    }
    markDirty()
  }
}

/// Owns one `cairo_t` drawing context; `deinit` destroys it.
final class DrawingContext {
  let handle: OpaquePointer
  /// Kept alive as long as the context draws into it.
  let surface: ImageSurface

  init(surface: ImageSurface) throws(InnerPeaceError) {
    self.surface = surface
    self.handle = cairo_create(surface.handle)!
    try check()
  }

  deinit { cairo_destroy(handle) }

  /// Throws if Cairo recorded an error on this context (out of memory, invalid matrix, ...).
  func check() throws(InnerPeaceError) {
    let status = cairo_status(handle)
    if status != CAIRO_STATUS_SUCCESS {
      throw .renderFailed(reason: "cairo: \(String(cString: cairo_status_to_string(status)))")
    }
  }

  /// Sets the source to an opaque colour, each component from 0 to 1.
  func setSource(red: Double, green: Double, blue: Double) {
    cairo_set_source_rgb(handle, red, green, blue)
  }

  /// Paints the source through the alpha of `mask`, its top-left corner at (`x`, `y`).
  func paint(through mask: ImageSurface, x: Double, y: Double) {
    cairo_mask_surface(handle, mask.handle, x, y)
  }

  /// Limits all later drawing to the rectangle.
  func clip(x: Double, y: Double, width: Double, height: Double) {
    cairo_rectangle(handle, x, y, width, height)
    cairo_clip(handle)
  }

  /// Replaces the target's pixels with `pixels` scaled by `scale` with its top-left corner at
  /// (`x`, `y`): Cairo's good (bilinear) filter, the edge pixels padded outwards so no black is
  /// pulled in. The context's state is as before afterwards, and holds nothing of `pixels`.
  func paint(_ pixels: Pixels, scale: Double, x: Double, y: Double) throws(InnerPeaceError) {
    // Cairo only reads a source surface: no mutable copy of the pixels is needed.
    try pixels.bytes.withUnsafeBufferPointer { (buffer) throws(InnerPeaceError) in
      let source = try ImageSurface(
        wrapping: UnsafeMutablePointer(mutating: buffer.baseAddress!), format: .rgb24, width: pixels.width,
        height: pixels.height, stride: pixels.stride)
      cairo_save(handle)
      cairo_translate(handle, x, y)
      cairo_scale(handle, scale, scale)
      cairo_set_source_surface(handle, source.handle, 0, 0)
      let pattern = cairo_get_source(handle)
      cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
      cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
      cairo_set_operator(handle, CAIRO_OPERATOR_SOURCE)
      cairo_paint(handle)
      // The source surface borrows the pixels' bytes: restoring the state releases Cairo's hold
      // on it before they go.
      cairo_restore(handle)
      try check()
    }
  }
}
