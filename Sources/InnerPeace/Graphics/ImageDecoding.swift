internal import CInnerPeace

/// Decodes background photos (JPEG through libturbojpeg, PNG through Cairo) to ``Pixels``.
enum ImageDecoding {
  /// Why an image header could not be read.
  struct ProbeFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  enum Kind { case jpeg, png }

  /// The image kind, from the file's first bytes; `nil` for anything else.
  static func kind(of bytes: [UInt8]) -> Kind? {
    if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
    if bytes.count >= 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
      return .png
    }
    return nil
  }

  /// Reads just enough of the header to say whether the image can be decoded and how big it is.
  /// - Returns: the width and height in pixels, or a reason it cannot be decoded.
  static func probe(_ bytes: [UInt8]) -> Result<(width: Int, height: Int), ProbeFailure> {
    switch kind(of: bytes) {
    case .jpeg:
      guard let handle = tjInitDecompress() else { return .failure(ProbeFailure("libturbojpeg could not start")) }
      defer { tjDestroy(handle) }
      var width: Int32 = 0
      var height: Int32 = 0
      var subsampling: Int32 = 0
      var colorspace: Int32 = 0
      let status = bytes.withUnsafeBufferPointer {
        tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
      }
      guard status == 0, width > 0, height > 0 else {
        return .failure(ProbeFailure(String(cString: tjGetErrorStr2(handle))))
      }
      return .success((Int(width), Int(height)))
    case .png:
      // IHDR is always the first chunk: width and height are big-endian at bytes 16...23.
      guard bytes.count >= 24, bytes[12..<16].elementsEqual(Array("IHDR".utf8)) else {
        return .failure(ProbeFailure("PNG header is truncated"))
      }
      func be32(_ offset: Int) -> Int {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      }
      let width = be32(16)
      let height = be32(20)
      guard width > 0, height > 0 else { return .failure(ProbeFailure("PNG has a zero size")) }
      return .success((width, height))
    case nil:
      return .failure(ProbeFailure("not a JPEG or PNG file"))
    }
  }

  /// Decodes an image, letting JPEG's DCT scaling shrink it as far as it can while it still
  /// covers `minimumCover` (so a 2400 px photo for a 1200 px card decodes at half size, faster
  /// and sharper than scaling the full image down afterwards).
  static func decode(_ bytes: [UInt8], covering target: (width: Int, height: Int)) throws(InnerPeaceError)
    -> Pixels
  {
    switch kind(of: bytes) {
    case .jpeg: return try decodeJPEG(bytes, covering: target)
    case .png: return try decodePNG(bytes)
    case nil: throw .renderFailed(reason: "not a JPEG or PNG file")
    }
  }

  private static func decodeJPEG(_ bytes: [UInt8], covering target: (width: Int, height: Int))
    throws(InnerPeaceError) -> Pixels
  {
    guard let handle = tjInitDecompress() else { throw .renderFailed(reason: "libturbojpeg could not start") }
    defer { tjDestroy(handle) }
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colorspace: Int32 = 0
    let headerStatus = bytes.withUnsafeBufferPointer {
      tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colorspace)
    }
    guard headerStatus == 0, width > 0, height > 0 else {
      throw .renderFailed(reason: String(cString: tjGetErrorStr2(handle)))
    }
    // The cover scale of the full image; any DCT factor at or above it still covers the canvas.
    let coverScale = max(Double(target.width) / Double(width), Double(target.height) / Double(height))
    var chosen = (width: Int(width), height: Int(height))
    var factorCount: Int32 = 0
    if let factors = tjGetScalingFactors(&factorCount) {
      var best = 1.0
      for index in 0..<Int(factorCount) {
        let factor = factors[index]
        let value = Double(factor.num) / Double(factor.denom)
        guard value <= 1, value >= coverScale, value < best else { continue }
        best = value
        chosen = (
          Int((Int(width) * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom)),
          Int((Int(height) * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom))
        )
      }
    }
    var pixels = Pixels(width: chosen.width, height: chosen.height, bytes: [])
    var status: Int32 = -1
    pixels.bytes = [UInt8](unsafeUninitializedCapacity: chosen.width * chosen.height * 4) { buffer, count in
      status = bytes.withUnsafeBufferPointer { source in
        tjDecompress2(
          handle, source.baseAddress, UInt(source.count), buffer.baseAddress, Int32(chosen.width),
          Int32(chosen.width * 4), Int32(chosen.height), Int32(TJPF_BGRX.rawValue), 0)
      }
      count = buffer.count
    }
    // A warning (a slightly truncated file, say) still gives usable pixels; an error does not.
    if status != 0 && tjGetErrorCode(handle) == TJERR_FATAL.rawValue {
      throw .renderFailed(reason: String(cString: tjGetErrorStr2(handle)))
    }
    return pixels
  }

  private static func decodePNG(_ bytes: [UInt8]) throws(InnerPeaceError) -> Pixels {
    final class Reader {
      let bytes: [UInt8]
      var offset = 0
      init(_ bytes: [UInt8]) { self.bytes = bytes }
    }
    let reader = Reader(bytes)
    let surfaceHandle = withExtendedLifetime(reader) { () -> OpaquePointer in
      cairo_image_surface_create_from_png_stream(
        { closure, data, length in
          let reader = Unmanaged<Reader>.fromOpaque(closure!).takeUnretainedValue()
          let wanted = Int(length)
          guard reader.offset + wanted <= reader.bytes.count, let data else { return CAIRO_STATUS_READ_ERROR }
          reader.bytes.withUnsafeBufferPointer {
            data.update(from: $0.baseAddress! + reader.offset, count: wanted)
          }
          reader.offset += wanted
          return CAIRO_STATUS_SUCCESS
        }, Unmanaged.passUnretained(reader).toOpaque())!
    }
    let surface: ImageSurface
    do {
      surface = try ImageSurface(adopting: surfaceHandle)
    } catch {
      throw .renderFailed(reason: "PNG data is invalid or truncated")
    }
    surface.flush()
    // Premultiplied pixels over black are the premultiplied colour bytes: copy rows as they are.
    var pixels = Pixels(width: surface.width, height: surface.height, bytes: [])
    let rowBytes = surface.width * 4
    let sourceStride = surface.stride
    let source = surface.data
    pixels.bytes = [UInt8](unsafeUninitializedCapacity: rowBytes * surface.height) { buffer, count in
      for row in 0..<surface.height {
        (buffer.baseAddress! + row * rowBytes).update(from: source + row * sourceStride, count: rowBytes)
      }
      count = buffer.count
    }
    return pixels
  }
}
