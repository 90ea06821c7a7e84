internal import CInnerPeace
internal import CInnerPeaceKernels

/// Encodes a finished Cairo surface as PNG (own encoder in C, `innerpeace_png_encode`), JPEG (libturbojpeg),
/// WebP (opaque cards: own VP8 encoder in C, `innerpeace_webp_encode`; transparent ones: libwebp) or
/// AVIF (libavif over libaom, in `ImageEncoding+AVIF.swift`).
package enum ImageEncoding {
  /// JPEG quality, 1...100.
  static let jpegQuality: Int32 = 90
  /// WebP quality, 0...100.
  static let webpQuality: Float = 90
  /// libwebp's speed/size trade-off for transparent cards, 0 (fast) to 6 (small). Method 0
  /// encodes an og card in two thirds of method 2's time at the same PSNR and SSIM, for a file
  /// about 23 % larger (still smaller than the JPEG); see BENCHMARKS.md.
  static let webpMethod: Int32 = 0
  /// libdeflate level of the PNG writer before issue 21 (``pngLibdeflateUp(pixels:stride:width:height:alpha:)``,
  /// kept for the benchmark's comparison).
  static let pngCompressionLevel: Int32 = 1

  /// Encodes the surface's pixels. A transparent card's WebP reuses the surface's memory for its
  /// packed rows, so the surface is spent: its pixels are not the card's afterwards.
  /// - Parameter quality: JPEG, WebP or AVIF quality, clamped to 1...100; `nil` for the defaults
  ///   (AVIF's: ``avifDefaultQuantizer``).
  ///   PNG ignores it.
  /// - Parameter threads: how many threads encode a PNG (the same bytes whichever); the other
  ///   formats ignore it.
  /// - Throws: ``InnerPeaceError/transparencyUnsupported(format:)`` for a transparent surface as JPEG
  ///   (``ImageFormat/validate(transparent:)``), ``InnerPeaceError/encodingFailed(format:reason:)``
  ///   when the encoder fails.
  static func encode(
    _ surface: ImageSurface, as format: ImageFormat, quality: Int? = nil, threads: Int = 1
  ) throws(InnerPeaceError) -> [UInt8] {
    try format.validate(transparent: hasAlpha(surface))
    surface.flush()
    let quality = quality.map { min(max($0, 1), 100) }
    switch format {
    case .png: return try png(surface, threads: threads)
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

  /// Encodes the surface's pixels with the PNG encoder in C (`innerpeace_png_encode`): filters
  /// chosen per row, a deflate made for filtered photographs, libdeflate for flat images. The
  /// surface is only read.
  private static func png(_ surface: ImageSurface, threads: Int) throws(InnerPeaceError) -> [UInt8] {
    try png(
      pixels: surface.data, stride: surface.stride, width: surface.width, height: surface.height,
      alpha: hasAlpha(surface), threads: threads)
  }

  /// The PNG encoder's loops. Every choice writes the same bytes; tests and the fuzz target compare them.
  package enum PNGKernels: CaseIterable, Sendable {
    /// The fastest the processor has: AVX-512 VBMI where present, else AVX2 and SSSE3, else SSE2, else
    /// plain C.
    case best
    /// Plain C loops compiled without vectorisation.
    case scalar
    /// SSE2 only (the x86-64 baseline), as on a processor without AVX2 or SSSE3.
    case baseline
    /// AVX2 and SSSE3 where present, as on a processor without AVX-512.
    case avx2

    var code: Int32 {
      switch self {
      case .best: Int32(INNERPEACE_PNG_BEST)
      case .scalar: Int32(INNERPEACE_PNG_SCALAR)
      case .baseline: Int32(INNERPEACE_PNG_BASELINE)
      case .avx2: Int32(INNERPEACE_PNG_AVX2)
      }
    }
  }

  /// Encodes Cairo pixels (rows `stride` bytes apart; B G R X, or premultiplied B G R A when
  /// `alpha`) as PNG: RGB, or straight RGBA when `alpha`. The pixels are only read.
  /// - Parameter kernels: which loops run; the bytes are the same whichever.
  /// - Parameter threads: how many threads share the bands of rows (1: the calling thread alone;
  ///   more: threads created for the call and joined before it returns); the bytes are the same
  ///   whichever.
  /// - Throws: ``InnerPeaceError/encodingFailed(format:reason:)`` when memory runs out.
  package static func png(
    pixels: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, alpha: Bool, kernels: PNGKernels = .best,
    threads: Int = 1
  ) throws(InnerPeaceError) -> [UInt8] {
    let bound = innerpeace_png_bound(Int32(width), Int32(height), alpha ? 1 : 0)
    // Only the pages the encoder writes become resident; the rest of the bound is address space.
    let png = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
      count = innerpeace_png_encode(
        pixels, stride, Int32(width), Int32(height), alpha ? 1 : 0, buffer.baseAddress, bound, kernels.code,
        Int32(clamping: threads))
    }
    guard !png.isEmpty else { throw .encodingFailed(format: .png, reason: "out of memory") }
    return png
  }

  /// The PNG writer before issue 21, for the benchmark's comparison: every row Up-filtered, then
  /// libdeflate at ``pngCompressionLevel``. Same arguments as ``png(pixels:stride:width:height:alpha:kernels:)``.
  package static func pngLibdeflateUp(
    pixels: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, alpha: Bool
  ) throws(InnerPeaceError) -> [UInt8] {
    let rowBytes = width * (alpha ? 4 : 3)
    let filteredCount = (rowBytes + 1) * height
    guard let compressor = libdeflate_alloc_compressor(pngCompressionLevel) else {
      throw .encodingFailed(format: .png, reason: "libdeflate could not allocate a compressor")
    }
    defer { libdeflate_free_compressor(compressor) }
    var previous = [UInt8](repeating: 0, count: rowBytes)
    var current = [UInt8](repeating: 0, count: rowBytes)
    let filtered = [UInt8](unsafeUninitializedCapacity: filteredCount) { target, count in
      for y in 0..<height {
        current.withUnsafeMutableBufferPointer { cur in
          previous.withUnsafeBufferPointer { prev in
            innerpeace_unpack_row(pixels + y * stride, cur.baseAddress, Int32(width), alpha ? 1 : 0)
            innerpeace_png_up(cur.baseAddress, prev.baseAddress, target.baseAddress! + y * (rowBytes + 1), rowBytes)
          }
        }
        swap(&previous, &current)
      }
      count = filteredCount
    }
    var header: [UInt8] = []
    header.appendBigEndian(UInt32(width))
    header.appendBigEndian(UInt32(height))
    header += [8, alpha ? 6 : 2, 0, 0, 0]  // 8-bit, RGBA or RGB, deflate, filter method 0, no interlace
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    appendChunk("IHDR", header[...], to: &png)
    let bound = libdeflate_zlib_compress_bound(compressor, filteredCount)
    var compressed = [UInt8](repeating: 0, count: bound)
    let compressedCount = compressed.withUnsafeMutableBufferPointer { out in
      filtered.withUnsafeBufferPointer {
        libdeflate_zlib_compress(compressor, $0.baseAddress, filteredCount, out.baseAddress, bound)
      }
    }
    guard compressedCount > 0 else {
      throw .encodingFailed(format: .png, reason: "libdeflate could not compress the image")
    }
    appendChunk("IDAT", compressed[0..<compressedCount], to: &png)
    appendChunk("IEND", [][...], to: &png)
    return png
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
    if !alpha {
      return try webp(
        pixels: surface.data, stride: surface.stride, width: surface.width, height: surface.height,
        quality: Int(quality.rounded())
      ).file
    }
    let width = surface.width
    let stride = surface.stride
    // A transparent card goes to libwebp (lossy colour, lossless alpha). Its pixels are
    // premultiplied: they are unpremultiplied to packed RGBA rows, never longer than the
    // surface's, so written over the surface, top down, each row read whole (into `row`) before
    // its packed form is written.
    let pixels = surface.data
    var row = [UInt8](repeating: 0, count: stride)
    row.withUnsafeMutableBufferPointer { row in
      for y in 0..<surface.height {
        row.baseAddress!.update(from: pixels + y * stride, count: stride)
        unpack(row: row.baseAddress!, width: width, alpha: true, into: pixels + y * width * 4)
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
    guard WebPPictureImportRGBA(&picture, pixels, Int32(width * 4)) != 0 else {
      throw .encodingFailed(format: .webp, reason: "out of memory")
    }
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

extension ImageEncoding {
  /// The WebP encoder's loops. Both write the same bytes; tests and the fuzz target compare them.
  package enum WebPKernels: CaseIterable, Sendable {
    /// SSE2 where the processor has it, else plain C.
    case best
    /// Plain C.
    case scalar

    var code: Int32 {
      switch self {
      case .best: Int32(INNERPEACE_WEBP_BEST)
      case .scalar: Int32(INNERPEACE_WEBP_SCALAR)
      }
    }
  }

  /// Encodes opaque Cairo pixels (rows `stride` bytes apart, B G R X) as a lossy WebP file with
  /// the VP8 encoder in C (`innerpeace_webp_encode`). The pixels are only read.
  /// - Parameter quality: 0 (smallest) to 100, mapped to VP8's quantizer as libwebp maps it.
  /// - Parameter loopFilter: whether the decoder smooths the blocks' edges (off, the decoded
  ///   planes are exactly `reconstruction`).
  /// - Parameter reconstruction: whether to return the Y, U and V planes a decoder rebuilds
  ///   before its loop filter (width x height, then two of (width + 1) / 2 x (height + 1) / 2).
  /// - Throws: ``InnerPeaceError/encodingFailed(format:reason:)`` when memory runs out or the
  ///   image is larger than VP8 allows.
  package static func webp(
    pixels: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, quality: Int, loopFilter: Bool = true,
    kernels: WebPKernels = .best, reconstruction: Bool = false
  ) throws(InnerPeaceError) -> (file: [UInt8], reconstruction: [UInt8]?) {
    let chroma = ((width + 1) / 2) * ((height + 1) / 2)
    var planes = [UInt8](repeating: 0, count: reconstruction ? width * height + 2 * chroma : 0)
    var output: UnsafeMutablePointer<UInt8>? = nil
    var size = 0
    let result = planes.withUnsafeMutableBufferPointer { target in
      innerpeace_webp_encode(
        pixels, stride, Int32(width), Int32(height), Int32(min(max(quality, 0), 100)), loopFilter ? 1 : 0,
        kernels.code, &output, &size, reconstruction ? target.baseAddress : nil)
    }
    defer { free(output) }
    guard result == Int32(INNERPEACE_WEBP_OK), let output else {
      let reason =
        switch result {
        case Int32(INNERPEACE_WEBP_TOO_LARGE): "the image is larger than VP8 allows"
        case Int32(INNERPEACE_WEBP_INVALID): "the image has no pixels"
        default: "out of memory"
        }
      throw .encodingFailed(format: .webp, reason: reason)
    }
    return (Array(UnsafeBufferPointer(start: output, count: size)), reconstruction ? planes : nil)
  }
}

extension Array where Element == UInt8 {
  fileprivate mutating func appendBigEndian(_ value: UInt32) {
    append(UInt8(value >> 24))
    append(UInt8(value >> 16 & 0xFF))
    append(UInt8(value >> 8 & 0xFF))
    append(UInt8(value & 0xFF))
  }
}
