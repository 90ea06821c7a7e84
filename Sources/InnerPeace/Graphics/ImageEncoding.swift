internal import CInnerPeace
internal import CInnerPeaceKernels

/// Encodes a finished Cairo surface as PNG (own writer over libdeflate), JPEG (libturbojpeg),
/// WebP (libwebp) or AVIF (libavif over libaom, in `ImageEncoding+AVIF.swift`).
enum ImageEncoding {
  /// JPEG quality, 1...100.
  static let jpegQuality: Int32 = 90
  /// WebP quality, 0...100.
  static let webpQuality: Float = 90
  /// libwebp's speed/size trade-off, 0 (fast) to 6 (small). Method 0 encodes an og card in two
  /// thirds of method 2's time at the same PSNR and SSIM, for a file about 23 % larger (still
  /// smaller than the JPEG); see BENCHMARKS.md.
  static let webpMethod: Int32 = 0
  /// libdeflate level for PNG. Level 1 over Up-filtered rows gives photo cards about 5 % larger
  /// than libpng's default (zlib 6, adaptive filters) in a quarter of the time; see BENCHMARKS.md.
  static let pngCompressionLevel: Int32 = 1

  /// Encodes the surface's pixels. PNG and WebP reuse the surface's memory for their packed rows,
  /// so the surface is spent: its pixels are not the card's afterwards.
  /// - Parameter quality: JPEG, WebP or AVIF quality, clamped to 1...100; `nil` for the defaults
  ///   (AVIF's: ``avifDefaultQuantizer``).
  ///   PNG ignores it.
  /// - Throws: ``InnerPeaceError/transparencyUnsupported(format:)`` for a transparent surface as JPEG
  ///   (``ImageFormat/validate(transparent:)``), ``InnerPeaceError/encodingFailed(format:reason:)``
  ///   when the encoder fails.
  static func encode(_ surface: ImageSurface, as format: ImageFormat, quality: Int? = nil) throws(InnerPeaceError)
    -> [UInt8]
  {
    try format.validate(transparent: hasAlpha(surface))
    surface.flush()
    let quality = quality.map { min(max($0, 1), 100) }
    switch format {
    case .png: return try png(surface)
    case .jpeg: return try jpeg(surface, quality: quality.map(Int32.init) ?? jpegQuality)
    case .webp: return try webp(surface, quality: quality.map(Float.init) ?? webpQuality)
    case .avif: return try avif(surface, quantizer: quality.map(avifQuantizer(quality:)) ?? avifDefaultQuantizer)
    }
  }

  /// Whether the surface's pixels carry alpha worth keeping.
  private static func hasAlpha(_ surface: ImageSurface) -> Bool { surface.format == .argb32 }

  /// Converts one row of Cairo pixels to packed RGB (or straight, unpremultiplied RGBA).
  @inline(__always)
  private static func unpack(
    row source: UnsafePointer<UInt8>, width: Int, alpha: Bool, into target: UnsafeMutablePointer<UInt8>
  ) {
    innerpeace_unpack_row(source, target, Int32(width), alpha ? 1 : 0)
  }

  // MARK: PNG

  private static func png(_ surface: ImageSurface) throws(InnerPeaceError) -> [UInt8] {
    let width = surface.width
    let height = surface.height
    let alpha = hasAlpha(surface)
    let rowBytes = width * (alpha ? 4 : 3)
    let filteredCount = (rowBytes + 1) * height
    guard let compressor = libdeflate_alloc_compressor(pngCompressionLevel) else {
      throw .encodingFailed(format: .png, reason: "libdeflate could not allocate a compressor")
    }
    defer { libdeflate_free_compressor(compressor) }

    // Filtered scanlines: one filter-type byte, then the row. An opaque card's filtered rows (3
    // bytes a pixel and one) fit inside its rows on the surface (4 bytes a pixel), so they are
    // written over the surface, top down, each after its source row has been read: no second
    // image in memory. A transparent card's rows are one byte longer and get a buffer of their own.
    var separate: [UInt8] = []
    if rowBytes + 1 <= surface.stride {
      filterRows(of: surface, alpha: alpha, into: surface.data)
    } else {
      separate = [UInt8](unsafeUninitializedCapacity: filteredCount) { buffer, count in
        filterRows(of: surface, alpha: alpha, into: buffer.baseAddress!)
        count = filteredCount
      }
    }

    var header: [UInt8] = []
    header.appendBigEndian(UInt32(width))
    header.appendBigEndian(UInt32(height))
    header += [8, alpha ? 6 : 2, 0, 0, 0]  // 8-bit, RGBA or RGB, deflate, filter method 0, no interlace
    var head: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", header[...], to: &head)
    head += [0, 0, 0, 0] + Array("IDAT".utf8)  // the IDAT chunk's length is filled in below
    var tail: [UInt8] = [0, 0, 0, 0]  // the IDAT chunk's CRC, filled in below
    appendChunk("IEND", [][...], to: &tail)

    // One buffer for the whole file: the head, libdeflate's output straight after it, the tail.
    // Only the pages libdeflate writes become resident; the rest of its bound is address space.
    let bound = libdeflate_zlib_compress_bound(compressor, filteredCount)
    var compressedCount = 0
    let png = [UInt8](unsafeUninitializedCapacity: head.count + bound + tail.count) { buffer, count in
      let base = buffer.baseAddress!
      base.initialize(from: head, count: head.count)
      compressedCount =
        separate.isEmpty
        ? libdeflate_zlib_compress(compressor, surface.data, filteredCount, base + head.count, bound)
        : separate.withUnsafeBufferPointer {
          libdeflate_zlib_compress(compressor, $0.baseAddress, filteredCount, base + head.count, bound)
        }
      guard compressedCount > 0 else { return }
      let idat = base + head.count - 8
      idat.initialize(from: bigEndian(UInt32(compressedCount)), count: 4)
      let crc = libdeflate_crc32(0, idat + 4, compressedCount + 4)
      var finish = tail
      finish.replaceSubrange(0..<4, with: bigEndian(crc))
      (base + head.count + compressedCount).initialize(from: finish, count: finish.count)
      count = head.count + compressedCount + finish.count
    }
    guard compressedCount > 0 else {
      throw .encodingFailed(format: .png, reason: "libdeflate could not compress the image")
    }
    return png
  }

  /// Writes the surface's rows, Up-filtered, to `target`, top down. `target` may be the surface's
  /// own memory: row `y` is read whole before filtered row `y` is written, and filtered rows are
  /// never longer than the surface's.
  private static func filterRows(of surface: ImageSurface, alpha: Bool, into target: UnsafeMutablePointer<UInt8>) {
    let width = surface.width
    let rowBytes = width * (alpha ? 4 : 3)
    let source = surface.data
    let stride = surface.stride
    var previous = [UInt8](repeating: 0, count: rowBytes)
    var current = [UInt8](repeating: 0, count: rowBytes)
    previous.withUnsafeMutableBufferPointer { prevBuffer in
      current.withUnsafeMutableBufferPointer { curBuffer in
        var prev = prevBuffer.baseAddress!
        var cur = curBuffer.baseAddress!
        for y in 0..<surface.height {
          unpack(row: source + y * stride, width: width, alpha: alpha, into: cur)
          innerpeace_png_up(cur, prev, target + y * (rowBytes + 1), rowBytes)
          swap(&prev, &cur)
        }
      }
    }
  }

  private static func appendChunk(_ type: String, _ data: ArraySlice<UInt8>, to png: inout [UInt8]) {
    png.appendBigEndian(UInt32(data.count))
    let typeBytes = Array(type.utf8)
    png += typeBytes
    png += data
    var crc = typeBytes.withUnsafeBufferPointer { libdeflate_crc32(0, $0.baseAddress, $0.count) }
    crc = data.withUnsafeBufferPointer { libdeflate_crc32(crc, $0.baseAddress, $0.count) }
    png.appendBigEndian(crc)
  }

  // MARK: JPEG

  private static func jpeg(_ surface: ImageSurface, quality: Int32) throws(InnerPeaceError) -> [UInt8] {
    guard let handle = tjInitCompress() else {
      throw .encodingFailed(format: .jpeg, reason: "libturbojpeg could not start")
    }
    defer { tjDestroy(handle) }
    var output: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    let status = tjCompress2(
      handle, surface.data, Int32(surface.width), Int32(surface.stride), Int32(surface.height),
      Int32(TJPF_BGRX.rawValue), &output, &size, Int32(TJSAMP_420.rawValue), quality, 0)
    defer { if let output { tjFree(output) } }
    guard status == 0, let output else {
      throw .encodingFailed(format: .jpeg, reason: String(cString: tjGetErrorStr2(handle)))
    }
    return Array(UnsafeBufferPointer(start: output, count: Int(size)))
  }

  // MARK: WebP

  private static func webp(_ surface: ImageSurface, quality: Float) throws(InnerPeaceError) -> [UInt8] {
    let alpha = hasAlpha(surface)
    let width = surface.width
    let stride = surface.stride
    // An opaque card's pixels are Cairo's BGRX bytes, which libwebp imports as they are. A
    // transparent card's are premultiplied: they are unpremultiplied to packed RGBA rows, never
    // longer than the surface's, so written over the surface, top down, each row read whole
    // (into `row`) before its packed form is written.
    let pixels = surface.data
    if alpha {
      var row = [UInt8](repeating: 0, count: stride)
      row.withUnsafeMutableBufferPointer { row in
        for y in 0..<surface.height {
          row.baseAddress!.update(from: pixels + y * stride, count: stride)
          unpack(row: row.baseAddress!, width: width, alpha: true, into: pixels + y * width * 4)
        }
      }
    }
    // The advanced API, for its speed setting (``webpMethod``).
    var config = WebPConfig()
    guard WebPConfigInit(&config) != 0 else { throw .encodingFailed(format: .webp, reason: "libwebp version mismatch") }
    config.quality = quality
    config.method = webpMethod
    var picture = WebPPicture()
    guard WebPPictureInit(&picture) != 0 else {
      throw .encodingFailed(format: .webp, reason: "libwebp version mismatch")
    }
    defer { WebPPictureFree(&picture) }
    picture.width = Int32(width)
    picture.height = Int32(surface.height)
    let imported =
      alpha
      ? WebPPictureImportRGBA(&picture, pixels, Int32(width * 4))
      : WebPPictureImportBGRX(&picture, pixels, Int32(stride))
    guard imported != 0 else { throw .encodingFailed(format: .webp, reason: "out of memory") }
    var writer = WebPMemoryWriter()
    WebPMemoryWriterInit(&writer)
    defer { WebPMemoryWriterClear(&writer) }
    let encoded = withUnsafeMutablePointer(to: &writer) { writerPointer in
      picture.writer = WebPMemoryWrite
      picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
      return WebPEncode(&config, &picture)
    }
    guard encoded != 0, let memory = writer.mem, writer.size > 0 else {
      throw .encodingFailed(format: .webp, reason: "libwebp error \(picture.error_code.rawValue)")
    }
    return Array(UnsafeBufferPointer(start: memory, count: writer.size))
  }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
  [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

extension Array where Element == UInt8 {
  fileprivate mutating func appendBigEndian(_ value: UInt32) {
    append(UInt8(value >> 24))
    append(UInt8(value >> 16 & 0xFF))
    append(UInt8(value >> 8 & 0xFF))
    append(UInt8(value & 0xFF))
  }
}
