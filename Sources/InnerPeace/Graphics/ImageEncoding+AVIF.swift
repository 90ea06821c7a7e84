internal import CInnerPeace

/// AVIF through libavif, with libaom as the AV1 encoder. The settings were chosen by measurement
/// (BENCHMARKS.md, "Issue 20: AVIF"; `scripts/avif-settings.c`): libaom at its fastest speed, one
/// thread (the service parallelises by worker process), 4:2:0 chroma like WebP and the JPEGs,
/// BT.601 full-range YUV (libyuv's fast path), and a quantizer whose cards have at least the SSIM
/// of WebP's at quality 90, at their size (`og`) or smaller (`story`).
extension ImageEncoding {
  /// libaom's speed, 0 (slowest, smallest) to 9 (libaom's fastest for still images; libavif's
  /// 10 gives the same bytes). Speed 8 makes `og` and `story` cards 17 to 25 % smaller at the
  /// same quantizer in two and a half to three and a half times the time.
  static let avifSpeed: Int32 = 9
  /// The AV1 quantizer used without an explicit quality, 0 (lossless) to 63: quality 81 on the
  /// scale of ``avifQuantizer(quality:)``.
  static let avifDefaultQuantizer: Int32 = 12

  /// The quantizer for a quality of 1...100, as libavif 1.x maps its own `quality`:
  /// `((100 - quality) * 63 + 50) / 100`, so 100 is lossless-quantized and 1 the coarsest.
  static func avifQuantizer(quality: Int) -> Int32 {
    Int32(((100 - min(max(quality, 1), 100)) * 63 + 50) / 100)
  }

  /// Encodes the surface straight from its BGRA memory (premultiplied for a transparent
  /// surface, whose alpha plane is kept losslessly; the alpha byte of an opaque one is ignored).
  /// The output is the same bytes for the same pixels and settings: one thread, no timestamps.
  static func avif(_ surface: ImageSurface, quantizer: Int32) throws(InnerPeaceError) -> [UInt8] {
    let alpha = surface.format == .argb32
    guard let avif = LibAVIF.shared else {
      throw .encodingFailed(format: .avif, reason: "\(LibAVIF.fileName) cannot be opened")
    }
    guard let image = avif.imageCreate(UInt32(surface.width), UInt32(surface.height), 8, AVIF_PIXEL_FORMAT_YUV420)
    else { throw .encodingFailed(format: .avif, reason: "out of memory") }
    defer { avif.imageDestroy(image) }
    // sRGB, stated in the file (nclx) so that browsers show the colours as drawn.
    image.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
    image.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
    image.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_BT601)
    image.pointee.yuvRange = AVIF_RANGE_FULL

    var pixels = avifRGBImage()
    avif.rgbImageSetDefaults(&pixels, image)
    pixels.format = AVIF_RGB_FORMAT_BGRA
    pixels.ignoreAlpha = alpha ? AVIF_FALSE : AVIF_TRUE
    pixels.alphaPremultiplied = alpha ? AVIF_TRUE : AVIF_FALSE
    pixels.pixels = surface.data
    pixels.rowBytes = UInt32(surface.stride)
    let converted = avif.imageRGBToYUV(image, &pixels)
    guard converted == AVIF_RESULT_OK else { throw .encodingFailed(format: .avif, reason: avif.text(of: converted)) }

    guard let encoder = avif.encoderCreate() else { throw .encodingFailed(format: .avif, reason: "out of memory") }
    defer { avif.encoderDestroy(encoder) }
    encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
    encoder.pointee.maxThreads = 1
    encoder.pointee.speed = avifSpeed
    encoder.pointee.minQuantizer = quantizer
    encoder.pointee.maxQuantizer = quantizer
    var output = avifRWData()
    defer { avif.rwDataFree(&output) }
    let written = avif.encoderWrite(encoder, image, &output)
    guard written == AVIF_RESULT_OK, let data = output.data, output.size > 0 else {
      throw .encodingFailed(format: .avif, reason: avif.text(of: written))
    }
    return Array(UnsafeBufferPointer(start: data, count: output.size))
  }
}

/// An AVIF file decoded to straight (unpremultiplied) RGBA, 8 bits a channel: what the tests
/// compare encoded cards with.
package struct DecodedAVIF: Sendable {
  package let width: Int
  package let height: Int
  /// `width * height * 4` bytes, rows top down.
  package let rgba: [UInt8]

  /// Decodes with libavif (its AV1 decoder: dav1d, else libaom).
  /// - Returns: `nil` when the bytes are not an AVIF image libavif can read.
  package init?(_ bytes: [UInt8]) {
    guard let avif = LibAVIF.shared, let decoder = avif.decoderCreate() else { return nil }
    defer { avif.decoderDestroy(decoder) }
    decoder.pointee.maxThreads = 1
    guard let image = avif.imageCreateEmpty() else { return nil }
    defer { avif.imageDestroy(image) }
    let read = bytes.withUnsafeBufferPointer { avif.decoderReadMemory(decoder, image, $0.baseAddress, $0.count) }
    guard read == AVIF_RESULT_OK else { return nil }
    var pixels = avifRGBImage()
    avif.rgbImageSetDefaults(&pixels, image)
    pixels.format = AVIF_RGB_FORMAT_RGBA
    pixels.depth = 8
    let width = Int(image.pointee.width)
    let height = Int(image.pointee.height)
    var converted = AVIF_RESULT_OK
    let rgba = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
      pixels.pixels = buffer.baseAddress
      pixels.rowBytes = UInt32(width * 4)
      converted = avif.imageYUVToRGB(image, &pixels)
      count = converted == AVIF_RESULT_OK ? width * height * 4 : 0
    }
    guard converted == AVIF_RESULT_OK else { return nil }
    self.width = width
    self.height = height
    self.rgba = rgba
  }
}
