internal import CInnerPeace
internal import CInnerPeaceCodecs
internal import CInnerPeaceKernels

#if canImport(Glibc)
  import Glibc
#endif

/// Checks and decodes background photos (JPEG through libturbojpeg, PNG through libpng) to
/// ``Pixels``, as they are meant to be seen (EXIF orientation applied, colours in sRGB).
///
/// A photo's colours are converted to sRGB with LittleCMS 2 when the file says they are in
/// another space: an embedded ICC profile (JPEG APP2 `ICC_PROFILE` segments, PNG `iCCP`) or, in a
/// PNG without one, `gAMA`/`cHRM` values other than sRGB's. A profile that cannot be used
/// (damaged, over ``maximumProfileBytes``, for another colour model) is ignored: the photo is
/// taken as sRGB, as browsers do. A photo without any of these is taken as sRGB at no extra cost.
///
/// ``inspect(_:)`` checks a whole file without decoding its pixels: the structure (JPEG marker
/// segments through to the end-of-image marker, PNG chunks through to IEND with their CRCs), a
/// format and colour space that can be decoded, and the size ``Limits`` allow. The catalog runs
/// it once per photo at load; ``decode(_:covering:)`` runs it again before decoding.
package enum ImageDecoding {
  /// Why an image cannot be decoded.
  struct ProbeFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  enum Kind { case jpeg, png }

  /// The largest colour profile read; a larger one is ignored (the photo is taken as sRGB).
  static let maximumProfileBytes = 4 << 20

  /// Where a photo's colours are defined, as its file says.
  enum ColourSource: Equatable {
    /// Nothing, or sRGB itself: the pixels are used as they are.
    case sRGB
    /// An ICC profile, the concatenation of these byte ranges (JPEG APP2 segments in order).
    case profile([Range<Int>])
    /// A zlib-compressed ICC profile (a PNG iCCP chunk's data).
    case compressedProfile(Range<Int>)
    /// PNG gAMA (the encoding exponent) and cHRM values (white, red, green, blue x and y).
    case chunks(gamma: Double?, chromaticities: [Double]?)
  }

  /// What a checked image is.
  struct Header: Equatable {
    let kind: Kind
    /// The size as stored in the file.
    let storedWidth: Int
    let storedHeight: Int
    /// The EXIF orientation, 1 to 8; 1 when there is none or it is not valid.
    let orientation: Int
    /// A JPEG of four components (CMYK or YCCK), which libjpeg cannot turn into RGB itself.
    let cmyk: Bool
    /// A JPEG with Adobe's APP14 marker: its CMYK values are stored inverted.
    let adobe: Bool
    /// A grey image (a one-component JPEG, a PNG of colour type 0 or 4).
    var grey = false
    /// A PNG with an alpha channel or a tRNS chunk.
    var alpha = false
    /// Where its colours are defined.
    var colour = ColourSource.sRGB

    /// The size as seen: orientations 5 to 8 turn the picture a quarter.
    var width: Int { orientation >= 5 ? storedHeight : storedWidth }
    var height: Int { orientation >= 5 ? storedWidth : storedHeight }
  }

  /// The image kind, from the file's first bytes; `nil` for anything else.
  static func kind(of bytes: [UInt8]) -> Kind? {
    if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF { return .jpeg }
    if bytes.count >= 8,
      bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    {
      return .png
    }
    return nil
  }

  /// Checks a whole file without decoding its pixels (see the type's documentation).
  static func inspect(_ bytes: [UInt8]) -> Result<Header, ProbeFailure> {
    do throws(ProbeFailure) {
      guard bytes.count <= Limits.maximumPictureBytes else {
        throw ProbeFailure("the file is over the limit of \(Limits.maximumPictureBytes >> 20) MiB")
      }
      let header: Header
      switch kind(of: bytes) {
      case .jpeg: header = try JPEGStructure.check(bytes)
      case .png: header = try PNGStructure.check(bytes)
      case nil: throw ProbeFailure("not a JPEG or PNG file")
      }
      if let problem = Limits.pictureSizeProblem(
        width: header.storedWidth, height: header.storedHeight)
      {
        throw ProbeFailure(problem)
      }
      return .success(header)
    } catch {
      return .failure(error)
    }
  }

  /// Whether the image can be decoded, and its size as seen (after EXIF orientation).
  static func probe(_ bytes: [UInt8]) -> Result<(width: Int, height: Int), ProbeFailure> {
    inspect(bytes).map { ($0.width, $0.height) }
  }

  /// The pixels of an 8-bit RGB (`channels` 3) or straight RGBA (`channels` 4) PNG of the given
  /// size exactly as stored, rows packed, read by libpng's own reader: the PNG encoder's tests and
  /// fuzz target compare them with the pixels encoded.
  /// - Throws: ``InnerPeaceError/decodingFailed(reason:)`` with libpng's reason when libpng refuses
  ///   the file, or when its size or channels differ.
  package static func exactPixels(ofPNG bytes: [UInt8], width: Int, height: Int, channels: Int)
    throws(InnerPeaceError) -> [UInt8]
  {
    var message = [CChar](repeating: 0, count: 256)
    var status: Int32 = -1
    let pixels = [UInt8](unsafeUninitializedCapacity: width * height * channels) { buffer, count in
      status = bytes.withUnsafeBufferPointer { source in
        message.withUnsafeMutableBufferPointer { text in
          innerpeace_png_decode_exact(
            source.baseAddress, source.count, UInt32(width), UInt32(height), UInt32(channels), buffer.baseAddress,
            text.baseAddress, text.count)
        }
      }
      count = status == 0 ? buffer.count : 0
    }
    guard status == 0 else {
      throw .decodingFailed(
        reason: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return pixels
  }

  /// The Y, U and V planes libwebp decodes a lossy WebP to (Y width x height, then U and V of
  /// (width + 1) / 2 x (height + 1) / 2, each row packed): what tests and the fuzz target compare with
  /// the WebP encoder's reconstruction.
  /// - Throws: ``InnerPeaceError/decodingFailed(reason:)`` when libwebp refuses the file or its size
  ///   differs.
  package static func webpPlanes(of bytes: [UInt8], width: Int, height: Int) throws(InnerPeaceError) -> [UInt8] {
    var decodedWidth: Int32 = 0
    var decodedHeight: Int32 = 0
    var u: UnsafeMutablePointer<UInt8>? = nil
    var v: UnsafeMutablePointer<UInt8>? = nil
    var stride: Int32 = 0
    var chromaStride: Int32 = 0
    guard let y = WebPDecodeYUV(bytes, bytes.count, &decodedWidth, &decodedHeight, &u, &v, &stride, &chromaStride)
    else { throw .decodingFailed(reason: "libwebp refused the file") }
    defer { WebPFree(y) }
    guard Int(decodedWidth) == width, Int(decodedHeight) == height, let u, let v else {
      throw .decodingFailed(reason: "libwebp decoded \(decodedWidth)x\(decodedHeight), not \(width)x\(height)")
    }
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    var planes: [UInt8] = []
    planes.reserveCapacity(width * height + 2 * chromaWidth * chromaHeight)
    for row in 0..<height {
      planes += UnsafeBufferPointer(start: y + row * Int(stride), count: width)
    }
    for plane in [u, v] {
      for row in 0..<chromaHeight {
        planes += UnsafeBufferPointer(start: plane + row * Int(chromaStride), count: chromaWidth)
      }
    }
    return planes
  }

  /// Checks and decodes an image, upright, reduced while decoding as far as it can be while it
  /// still covers `target`: JPEG by DCT scaling (a 2400 px photo for a 1200 px card decodes at
  /// half size, faster and sharper than scaling the full image down afterwards), PNG by
  /// averaging whole boxes of pixels as the rows stream in.
  /// - Parameter decoder: how a JPEG is decoded (the same pixels either way).
  /// - Throws: ``InnerPeaceError/decodingFailed(reason:)`` with the reason it cannot be decoded.
  static func decode(
    _ bytes: [UInt8], covering target: (width: Int, height: Int), decoder: JPEGDecoder = .fastest
  ) throws(InnerPeaceError) -> Pixels {
    switch inspect(bytes) {
    case .success(let header): return try decode(bytes, header: header, covering: target, decoder: decoder)
    case .failure(let failure): throw .decodingFailed(reason: failure.reason)
    }
  }

  /// How a whole JPEG is decoded; the same pixels either way.
  enum JPEGDecoder {
    /// At 5/8, 6/8 and 7/8 of its size, where libjpeg runs its inverse DCTs in plain C, a
    /// baseline JPEG goes through the part's decoder asked for the whole image (with the AVX-512
    /// inverse DCTs, ``innerpeace_jpeg_vector_idct_available``), and through TurboJPEG when that
    /// declines it (any warning, a progressive or CMYK file); any other through TurboJPEG.
    case fastest
    /// TurboJPEG alone: the reference the tests and the fuzz target compare the others with.
    case turboJPEG
  }

  /// The same, for bytes ``inspect(_:)`` has checked (`header`).
  private static func decode(
    _ bytes: [UInt8], header: Header, covering target: (width: Int, height: Int), decoder: JPEGDecoder = .fastest
  ) throws(InnerPeaceError) -> Pixels {
    // Decode as stored: for a picture turned a quarter, the canvas turns with it.
    let storedTarget = header.orientation >= 5 ? (target.height, target.width) : target
    var pixels: Pixels
    switch header.kind {
    case .jpeg:
      let colour = ColourTransform(header, bytes, layout: INNERPEACE_LAYOUT_BGRX)
      let scaling = jpegScaling(header, covering: storedTarget)
      if decoder == .fastest, !header.cmyk, innerpeace_jpeg_vector_idct_available() == 1,
        [5, 6, 7].contains(scaling.num * 8 / scaling.denom), scaling.num * 8 % scaling.denom == 0,
        let whole = decodeJPEGPart(
          bytes, scaling: scaling, (0, 0, scaling.width, scaling.height), colour: colour)
      {
        pixels = whole
      } else {
        pixels = try decodeJPEG(bytes, header: header, colour: colour, covering: storedTarget)
      }
    case .png:
      // With alpha, each row is converted before it is premultiplied; an opaque PNG is converted
      // once reduced, as a JPEG is (a quarter of the work at half size).
      let layout = header.alpha ? INNERPEACE_LAYOUT_RGBA : INNERPEACE_LAYOUT_BGRX
      let colour = ColourTransform(header, bytes, layout: layout)
      pixels = try decodePNG(bytes, header: header, colour: header.alpha ? colour : nil, covering: storedTarget)
      if !header.alpha, let colour { colour.apply(&pixels.bytes) }
    }
    return oriented(pixels, header.orientation)
  }

  /// Decodes an image as ``decode(_:covering:)`` does, or only the part of that decode that
  /// `part` asks for, given the decoded size (`nil`: the whole): the same pixels there, for a
  /// fraction of the CPU (libjpeg decodes the part's rows and columns only). A part is decoded
  /// for an upright baseline JPEG that decodes cleanly (``innerpeace_jpeg_decode_part``); any
  /// other image, or one whose part did not decode cleanly, is decoded whole here as before, so
  /// that its outcome (its pixels, or the error) is unchanged.
  /// - Throws: ``InnerPeaceError/decodingFailed(reason:)`` as ``decode(_:covering:)`` does.
  static func decode(
    _ bytes: [UInt8], covering target: (width: Int, height: Int),
    part: ((width: Int, height: Int)) -> (x: Int, y: Int, width: Int, height: Int)?
  ) throws(InnerPeaceError) -> DecodedPhoto {
    let header: Header
    switch inspect(bytes) {
    case .success(let checked): header = checked
    case .failure(let failure): throw .decodingFailed(reason: failure.reason)
    }
    if header.kind == .jpeg, header.orientation == 1, !header.cmyk {
      let scaling = jpegScaling(header, covering: target)
      if let box = part((scaling.width, scaling.height)) {
        if let pixels = decodeJPEGPart(
          bytes, scaling: scaling, box, colour: ColourTransform(header, bytes, layout: INNERPEACE_LAYOUT_BGRX))
        {
          return DecodedPhoto(pixels: pixels, part: box)
        }
        // libjpeg declined the part (a warning anywhere in the stream: it reads all of it), so it
        // would decline the whole: TurboJPEG decides.
        return DecodedPhoto(whole: try decode(bytes, header: header, covering: target, decoder: .turboJPEG))
      }
    }
    // Checked once: the structure walk is not repeated for the whole decode.
    return DecodedPhoto(whole: try decode(bytes, header: header, covering: target))
  }

  /// Rows and columns `box` of the JPEG decoded at `scaling`, in their place in an image of the
  /// scaled size (see ``DecodedPhoto``), converted by `colour`; or `nil` when libjpeg did not
  /// decode them cleanly (see ``innerpeace_jpeg_decode_part``).
  private static func decodeJPEGPart(
    _ bytes: [UInt8], scaling: (width: Int, height: Int, num: Int, denom: Int),
    _ box: (x: Int, y: Int, width: Int, height: Int), colour: ColourTransform?
  ) -> Pixels? {
    guard box.x >= 0, box.y >= 0, box.width > 0, box.height > 0, box.x + box.width <= scaling.width,
      box.y + box.height <= scaling.height
    else { return nil }
    let stride = scaling.width * 4
    var status: Int32 = 1
    let decoded = [UInt8](unsafeUninitializedCapacity: stride * scaling.height) { buffer, count in
      // Only the part's rows are written; the pages of the others are never touched.
      let first = buffer.baseAddress! + box.y * stride + box.x * 4
      innerpeace_advise_huge_pages(buffer.baseAddress! + box.y * stride, box.height * stride)
      status = bytes.withUnsafeBufferPointer { source in
        innerpeace_jpeg_decode_part(
          source.baseAddress, source.count, UInt32(scaling.num), UInt32(scaling.denom), UInt32(scaling.width),
          UInt32(scaling.height), UInt32(box.x), UInt32(box.y), UInt32(box.width), UInt32(box.height),
          buffer.baseAddress, stride, nil, 0)
      }
      if status == 0, let colour {
        for row in 0..<box.height { colour.apply(first + row * stride, count: box.width) }
      }
      count = status == 0 ? buffer.count : 0
    }
    return status == 0 ? Pixels(width: scaling.width, height: scaling.height, bytes: decoded) : nil
  }

  /// The size, as stored (before the picture is turned upright), that ``decode(_:covering:)``
  /// decodes an image of `header` at to cover `target` (as seen). Two targets with the same
  /// decoded size give the same pixels.
  static func decodedSize(_ header: Header, covering target: (width: Int, height: Int)) -> (width: Int, height: Int) {
    decodedSize(header, coveringStored: header.orientation >= 5 ? (target.height, target.width) : target)
  }

  private static func decodedSize(_ header: Header, coveringStored target: (width: Int, height: Int)) -> (
    width: Int, height: Int
  ) {
    switch header.kind {
    case .jpeg: return jpegScaledSize(header, covering: target)
    case .png:
      let factor = pngReduction(header, covering: target)
      return ((header.storedWidth + factor - 1) / factor, (header.storedHeight + factor - 1) / factor)
    }
  }

  /// The smallest of libjpeg's DCT scalings (at most 1) whose image still covers `target`.
  private static func jpegScaledSize(_ header: Header, covering target: (width: Int, height: Int)) -> (
    width: Int, height: Int
  ) {
    let scaling = jpegScaling(header, covering: target)
    return (scaling.width, scaling.height)
  }

  /// That scaling, `num / denom`, and the image's size at it.
  private static func jpegScaling(_ header: Header, covering target: (width: Int, height: Int)) -> (
    width: Int, height: Int, num: Int, denom: Int
  ) {
    let width = header.storedWidth
    let height = header.storedHeight
    // The cover scale of the full image; any DCT factor at or above it still covers the canvas.
    let coverScale = max(Double(target.width) / Double(width), Double(target.height) / Double(height))
    var chosen = (width: width, height: height, num: 1, denom: 1)
    var factorCount: Int32 = 0
    if let factors = tjGetScalingFactors(&factorCount) {
      var best = 1.0
      for index in 0..<Int(factorCount) {
        let factor = factors[index]
        let value = Double(factor.num) / Double(factor.denom)
        guard value <= 1, value >= coverScale, value < best else { continue }
        best = value
        chosen = (
          (width * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom),
          (height * Int(factor.num) + Int(factor.denom) - 1) / Int(factor.denom),
          Int(factor.num), Int(factor.denom)
        )
      }
    }
    return chosen
  }

  /// The largest whole factor whose PNG, reduced by averaging boxes of that side, still covers
  /// `target` on both sides.
  private static func pngReduction(_ header: Header, covering target: (width: Int, height: Int)) -> Int {
    max(1, min(header.storedWidth / max(1, target.width), header.storedHeight / max(1, target.height)))
  }

  private static func decodeJPEG(
    _ bytes: [UInt8], header: Header, colour: ColourTransform?, covering target: (width: Int, height: Int)
  ) throws(InnerPeaceError) -> Pixels {
    guard let handle = tjInitDecompress() else {
      throw .decodingFailed(reason: "libturbojpeg could not start")
    }
    defer { tjDestroy(handle) }
    let chosen = jpegScaledSize(header, covering: target)
    // CMYK comes out as C M Y K bytes and is converted here; everything else straight to B G R X.
    let format = header.cmyk ? TJPF_CMYK : TJPF_BGRX
    func decompress(into buffer: UnsafeMutableBufferPointer<UInt8>, stopOnWarning: Bool) -> Int32 {
      let flags = TJFLAG_LIMITSCANS | (stopOnWarning ? TJFLAG_STOPONWARNING : 0)
      return bytes.withUnsafeBufferPointer { source in
        tjDecompress2(
          handle, source.baseAddress, UInt(source.count), buffer.baseAddress, Int32(chosen.width),
          Int32(chosen.width * 4), Int32(chosen.height), Int32(format.rawValue), flags)
      }
    }
    var failure: String?
    var pixels = Pixels(width: chosen.width, height: chosen.height, bytes: [])
    pixels.bytes = [UInt8](unsafeUninitializedCapacity: chosen.width * chosen.height * 4) {
      buffer, count in
      count = buffer.count
      innerpeace_advise_huge_pages(buffer.baseAddress, buffer.count)
      // Damaged data (a scan cut short, a bad Huffman code) is only a warning to libjpeg, which
      // fills the rest with grey: stop at the first warning. Warnings that say nothing about
      // the pixels (stray bytes between segments, an odd JFIF version) are decoded through.
      if decompress(into: buffer, stopOnWarning: true) == 0 { return }
      var message = String(cString: tjGetErrorStr2(handle))
      if tjGetErrorCode(handle) == TJERR_WARNING.rawValue
        && !JPEGStructure.warningSpoilsPixels(message)
      {
        if decompress(into: buffer, stopOnWarning: false) == 0 { return }
        message = String(cString: tjGetErrorStr2(handle))
        if tjGetErrorCode(handle) == TJERR_WARNING.rawValue
          && !JPEGStructure.warningSpoilsPixels(message)
        {
          return
        }
      }
      failure = message
    }
    if let failure { throw .decodingFailed(reason: failure) }
    if let colour {
      colour.apply(&pixels.bytes)
    } else if header.cmyk {
      pixels.bytes.withUnsafeMutableBufferPointer {
        innerpeace_cmyk_to_bgrx($0.baseAddress, chosen.width * chosen.height, header.adobe ? 1 : 0)
      }
    }
    return pixels
  }

  private static func decodePNG(
    _ bytes: [UInt8], header: Header, colour: ColourTransform?, covering target: (width: Int, height: Int)
  ) throws(InnerPeaceError) -> Pixels {
    let factor = pngReduction(header, covering: target)
    let reduced = decodedSize(header, coveringStored: target)
    var message = [CChar](repeating: 0, count: 256)
    var status: Int32 = -1
    let decoded = [UInt8](unsafeUninitializedCapacity: reduced.width * reduced.height * 4) {
      buffer, count in
      innerpeace_advise_huge_pages(buffer.baseAddress, buffer.count)
      status = bytes.withUnsafeBufferPointer { source in
        message.withUnsafeMutableBufferPointer { text in
          innerpeace_png_decode(
            source.baseAddress, source.count, UInt32(factor), UInt32(Limits.maximumPictureSide),
            colour?.handle, buffer.baseAddress,
            UInt32(reduced.width), UInt32(reduced.height), text.baseAddress, text.count)
        }
      }
      count = status == 0 ? buffer.count : 0
    }
    guard status == 0 else {
      let reason = String(
        decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw .decodingFailed(reason: reason.isEmpty ? "PNG data is invalid" : reason)
    }
    return Pixels(width: reduced.width, height: reduced.height, bytes: decoded)
  }

  /// The pixels as they are meant to be seen: flipped or turned as the EXIF orientation says.
  static func oriented(_ pixels: Pixels, _ orientation: Int) -> Pixels {
    guard (2...8).contains(orientation) else { return pixels }
    let turned = orientation >= 5
    let size =
      turned
      ? (width: pixels.height, height: pixels.width) : (width: pixels.width, height: pixels.height)
    let bytes = [UInt8](unsafeUninitializedCapacity: pixels.bytes.count) { target, count in
      pixels.bytes.withUnsafeBytes { source in
        innerpeace_orient(
          source.baseAddress!.assumingMemoryBound(to: UInt32.self), UInt32(pixels.width),
          UInt32(pixels.height),
          Int32(orientation),
          UnsafeMutableRawPointer(target.baseAddress!).assumingMemoryBound(to: UInt32.self))
      }
      count = target.count
    }
    return Pixels(width: size.width, height: size.height, bytes: bytes)
  }
}

// MARK: JPEG structure

/// Walks a JPEG's marker segments from SOI to EOI without decoding anything.
enum JPEGStructure {
  /// Checks the file's structure, its frame header and that libjpeg can decode its kind.
  static func check(_ bytes: [UInt8]) throws(ImageDecoding.ProbeFailure) -> ImageDecoding.Header {
    let walked = try bytes.withUnsafeBufferPointer { (buffer) throws(ImageDecoding.ProbeFailure) -> Walk in
      try walk(buffer)
    }
    // libjpeg's own reading of the header: precision, sampling and colour space it supports.
    guard let handle = tjInitDecompress() else {
      throw ImageDecoding.ProbeFailure("libturbojpeg could not start")
    }
    defer { tjDestroy(handle) }
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colourspace: Int32 = 0
    let status = bytes.withUnsafeBufferPointer {
      tjDecompressHeader3(
        handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colourspace)
    }
    guard status == 0 else {
      throw ImageDecoding.ProbeFailure(String(cString: tjGetErrorStr2(handle)))
    }
    guard Int(width) == walked.width, Int(height) == walked.height else {
      throw ImageDecoding.ProbeFailure("the JPEG frame header is inconsistent")
    }
    let cmyk = colourspace == TJCS_CMYK.rawValue || colourspace == TJCS_YCCK.rawValue
    return ImageDecoding.Header(
      kind: .jpeg, storedWidth: walked.width, storedHeight: walked.height,
      orientation: walked.orientation, cmyk: cmyk,
      adobe: walked.adobe, grey: colourspace == TJCS_GRAY.rawValue, colour: walked.profile)
  }

  /// libjpeg warnings that mean the pixels are damaged (as opposed to a harmless oddity).
  static func warningSpoilsPixels(_ message: String) -> Bool {
    if message.contains("extraneous bytes") || message.contains("bad ICC marker") { return false }
    return message.contains("Corrupt JPEG data") || message.contains("Premature end")
  }

  struct Walk {
    var width = 0
    var height = 0
    var orientation = 1
    var adobe = false
    /// The ICC profile of the APP2 segments, when they make a whole one.
    var profile = ImageDecoding.ColourSource.sRGB
  }

  /// The ICC profile carried in APP2 `ICC_PROFILE` segments (`(sequence number, count, data)`),
  /// as libjpeg reads it: numbered 1 to count, each once, all agreeing on the count, at most
  /// ``ImageDecoding/maximumProfileBytes`` in all. Anything else is no profile.
  static func profile(_ segments: [(number: Int, count: Int, data: Range<Int>)]) -> ImageDecoding.ColourSource {
    guard let count = segments.first?.count, count > 0, segments.count == count,
      segments.allSatisfy({ $0.count == count })
    else { return .sRGB }
    let ordered = segments.sorted { $0.number < $1.number }
    guard ordered.map(\.number).elementsEqual(1...count),
      ordered.reduce(0, { $0 + $1.data.count }) <= ImageDecoding.maximumProfileBytes
    else { return .sRGB }
    return .profile(ordered.map(\.data))
  }

  static func walk(_ bytes: UnsafeBufferPointer<UInt8>) throws(ImageDecoding.ProbeFailure) -> Walk {
    let count = bytes.count
    let truncated = ImageDecoding.ProbeFailure("the JPEG is truncated (no end-of-image marker)")
    var result = Walk()
    var sawFrame = false
    var sawScan = false
    var sawExif = false
    var profileSegments: [(number: Int, count: Int, data: Range<Int>)] = []
    var index = 2
    while true {
      guard index < count else { throw truncated }
      guard bytes[index] == 0xFF else {
        throw ImageDecoding.ProbeFailure("the JPEG marker structure is corrupt")
      }
      while index < count && bytes[index] == 0xFF { index += 1 }
      guard index < count else { throw truncated }
      let marker = bytes[index]
      index += 1
      switch marker {
      case 0xD9:
        guard sawScan else { throw ImageDecoding.ProbeFailure("the JPEG has no image data") }
        if !profileSegments.isEmpty { result.profile = profile(profileSegments) }
        return result
      case 0x01, 0xD0...0xD7:
        continue
      case 0x00, 0xD8:
        throw ImageDecoding.ProbeFailure("the JPEG marker structure is corrupt")
      default:
        break
      }
      guard index + 2 <= count else { throw truncated }
      let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
      guard length >= 2, index + length <= count else { throw truncated }
      let payload = (index + 2)..<(index + length)
      switch marker {
      case 0xE1
      where !sawExif && payload.count >= 6
        && bytes[payload.prefix(6)].elementsEqual(Array("Exif\0\0".utf8)):
        sawExif = true
        result.orientation =
          Exif.orientation(bytes, in: (payload.lowerBound + 6)..<payload.upperBound) ?? 1
      case 0xE2
      where !sawScan && payload.count >= 14
        && bytes[payload.prefix(12)].elementsEqual(Array("ICC_PROFILE\0".utf8)):
        profileSegments.append(
          (
            Int(bytes[payload.lowerBound + 12]), Int(bytes[payload.lowerBound + 13]),
            (payload.lowerBound + 14)..<payload.upperBound
          ))
      case 0xEE
      where payload.count >= 12 && bytes[payload.prefix(5)].elementsEqual(Array("Adobe".utf8)):
        result.adobe = true
      case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
        guard !sawFrame else { break }
        guard payload.count >= 6 else {
          throw ImageDecoding.ProbeFailure("the JPEG frame header is truncated")
        }
        guard bytes[payload.lowerBound] == 8 else {
          throw ImageDecoding.ProbeFailure(
            "\(bytes[payload.lowerBound])-bit JPEG is not supported (8-bit only)")
        }
        result.height = Int(bytes[payload.lowerBound + 1]) << 8 | Int(bytes[payload.lowerBound + 2])
        result.width = Int(bytes[payload.lowerBound + 3]) << 8 | Int(bytes[payload.lowerBound + 4])
        guard result.width > 0, result.height > 0 else {
          throw ImageDecoding.ProbeFailure("the JPEG frame header has a zero size")
        }
        sawFrame = true
      case 0xDA:
        guard sawFrame else {
          throw ImageDecoding.ProbeFailure("the JPEG has a scan before its frame header")
        }
        sawScan = true
        // Entropy-coded data follows: every 0xFF in it is stuffed (FF 00) or a restart marker,
        // so the next other marker ends the scan.
        index += length
        while true {
          guard index < count,
            let found = memchr(bytes.baseAddress! + index, 0xFF, count - index)
          else { throw truncated }
          let at = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
          guard at + 1 < count else { throw truncated }
          let next = bytes[at + 1]
          if next == 0x00 || (0xD0...0xD7).contains(next) {
            index = at + 2
          } else if next == 0xFF {
            index = at + 1
          } else {
            index = at
            break
          }
        }
        continue
      default:
        break
      }
      index += length
    }
  }
}

// MARK: PNG structure

/// Walks a PNG's chunks from IHDR to IEND, checking lengths and the CRCs of critical chunks.
enum PNGStructure {
  static func check(_ bytes: [UInt8]) throws(ImageDecoding.ProbeFailure) -> ImageDecoding.Header {
    try bytes.withUnsafeBufferPointer { (buffer) throws(ImageDecoding.ProbeFailure) in
      try walk(buffer)
    }
  }

  static func walk(_ bytes: UnsafeBufferPointer<UInt8>) throws(ImageDecoding.ProbeFailure)
    -> ImageDecoding.Header
  {
    let count = bytes.count
    let truncated = ImageDecoding.ProbeFailure("the PNG is truncated (no IEND chunk)")
    func be32(_ offset: Int) -> Int {
      Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
        | Int(bytes[offset + 3])
    }
    var width = 0
    var height = 0
    var colourType = 0
    var orientation = 1
    var sawPalette = false
    var sawData = false
    var sawTransparency = false
    var colour = Colour()
    var index = 8
    var first = true
    while true {
      guard index + 12 <= count else { throw truncated }
      let length = be32(index)
      guard length <= 0x7FFF_FFFF, length <= count - index - 12 else { throw truncated }
      let type = Array(bytes[(index + 4)..<(index + 8)])
      guard type.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
        throw ImageDecoding.ProbeFailure("the PNG chunk structure is corrupt")
      }
      let name = String(decoding: type, as: UTF8.self)
      let data = (index + 8)..<(index + 8 + length)
      let critical = type[0] & 0x20 == 0
      if critical {
        let crc = libdeflate_crc32(0, bytes.baseAddress! + index + 4, 4 + length)
        guard Int(crc) == be32(data.upperBound) else {
          throw ImageDecoding.ProbeFailure("the PNG's \(name) chunk is damaged (CRC mismatch)")
        }
      }
      guard !first || name == "IHDR" else {
        throw ImageDecoding.ProbeFailure("the PNG does not start with IHDR")
      }
      switch name {
      case "IHDR":
        guard first, length == 13 else {
          throw ImageDecoding.ProbeFailure("the PNG header (IHDR) is invalid")
        }
        width = be32(data.lowerBound)
        height = be32(data.lowerBound + 4)
        let depth = Int(bytes[data.lowerBound + 8])
        colourType = Int(bytes[data.lowerBound + 9])
        let depths: [Int: [Int]] = [
          0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
        ]
        guard depths[colourType]?.contains(depth) == true else {
          throw ImageDecoding.ProbeFailure(
            "PNG colour type \(colourType) with bit depth \(depth) is not valid")
        }
        guard bytes[data.lowerBound + 10] == 0, bytes[data.lowerBound + 11] == 0,
          bytes[data.lowerBound + 12] <= 1
        else { throw ImageDecoding.ProbeFailure("the PNG header (IHDR) is invalid") }
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
          throw ImageDecoding.ProbeFailure("the PNG has a zero size")
        }
      case "PLTE":
        guard !sawData, length > 0, length % 3 == 0, length <= 768 else {
          throw ImageDecoding.ProbeFailure("the PNG palette is invalid")
        }
        sawPalette = true
      case "IDAT":
        guard colourType != 3 || sawPalette else {
          throw ImageDecoding.ProbeFailure("the PNG has no palette")
        }
        sawData = true
      case "IEND":
        guard sawData else { throw ImageDecoding.ProbeFailure("the PNG has no image data") }
        return ImageDecoding.Header(
          kind: .png, storedWidth: width, storedHeight: height, orientation: orientation,
          cmyk: false, adobe: false, grey: colourType == 0 || colourType == 4,
          alpha: colourType == 4 || colourType == 6 || sawTransparency, colour: colour.source)
      case "eXIf":
        // A TIFF structure, sometimes (against the specification) after an Exif APP1 prefix.
        var tiff = data
        if length >= 6, bytes[data.prefix(6)].elementsEqual(Array("Exif\0\0".utf8)) {
          tiff = (data.lowerBound + 6)..<data.upperBound
        }
        let crc = libdeflate_crc32(0, bytes.baseAddress! + index + 4, 4 + length)
        if Int(crc) == be32(data.upperBound) {
          orientation = Exif.orientation(bytes, in: tiff) ?? 1
        }
      case "tRNS":
        sawTransparency = true
      case "iCCP", "sRGB", "gAMA", "cHRM":
        // As libpng reads them: before PLTE and IDAT, the first of each, with a good CRC.
        guard !sawPalette, !sawData,
          Int(libdeflate_crc32(0, bytes.baseAddress! + index + 4, 4 + length)) == be32(data.upperBound)
        else { break }
        colour.read(name, bytes, data)
      default:
        if critical {
          throw ImageDecoding.ProbeFailure("the PNG has an unknown critical chunk \(name)")
        }
      }
      first = false
      index = data.upperBound + 4
    }
  }
}

extension PNGStructure {
  /// A PNG's colour chunks, and what they make together.
  struct Colour {
    var profile: Range<Int>?
    var sRGB = false
    var gamma: Double?
    var chromaticities: [Double]?
    var seen: Set<String> = []

    mutating func read(_ name: String, _ bytes: UnsafeBufferPointer<UInt8>, _ data: Range<Int>) {
      guard seen.insert(name).inserted else { return }
      func be32(_ offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
          | Int(bytes[offset + 3])
      }
      switch name {
      case "iCCP":
        // A name of 1 to 79 bytes, a zero byte, compression method 0, then the zlib stream.
        guard let end = bytes[data].firstIndex(of: 0), (1...79).contains(end - data.lowerBound),
          end + 2 < data.upperBound, bytes[end + 1] == 0
        else { return }
        profile = (end + 2)..<data.upperBound
      case "sRGB":
        sRGB = data.count == 1
      case "gAMA":
        guard data.count == 4, be32(data.lowerBound) > 0 else { return }
        gamma = Double(be32(data.lowerBound)) / 100_000
      case "cHRM":
        guard data.count == 32 else { return }
        chromaticities = (0..<8).map { Double(be32(data.lowerBound + 4 * $0)) / 100_000 }
      default:
        break
      }
    }

    /// sRGB's cHRM values.
    static let sRGBChromaticities = [0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06]

    /// In the PNG specification's order: iCCP, then sRGB, then gAMA and cHRM. gAMA within 1 % of
    /// 1/2.2 and cHRM within 0.01 of sRGB's (what encoders write beside an sRGB chunk, or alone
    /// for sRGB) are sRGB.
    var source: ImageDecoding.ColourSource {
      if let profile { return .compressedProfile(profile) }
      if sRGB || (gamma == nil && chromaticities == nil) { return .sRGB }
      let sRGBGamma = gamma.map { abs($0 - 1 / 2.2) <= 0.01 / 2.2 } ?? true
      let sRGBPrimaries =
        chromaticities.map { zip($0, Self.sRGBChromaticities).allSatisfy { abs($0 - $1) <= 0.01 } } ?? true
      if sRGBGamma && sRGBPrimaries { return .sRGB }
      return .chunks(gamma: gamma, chromaticities: chromaticities)
    }
  }
}

// MARK: Colour management

/// Owns a LittleCMS transform to sRGB made from a photo's colour profile or PNG colour chunks;
/// `nil` (no transform, no cost) for a photo in sRGB or with a profile that cannot be used.
final class ColourTransform {
  let handle: OpaquePointer

  init?(_ header: ImageDecoding.Header, _ bytes: [UInt8], layout: innerpeace_pixel_layout) {
    let model =
      header.cmyk
      ? (header.adobe ? INNERPEACE_COLOUR_CMYK_INVERTED : INNERPEACE_COLOUR_CMYK)
      : header.grey ? INNERPEACE_COLOUR_GREY : INNERPEACE_COLOUR_RGB
    let made: OpaquePointer?
    switch header.colour {
    case .sRGB:
      return nil
    case .profile(let ranges):
      let profile = ranges.count == 1 ? Array(bytes[ranges[0]]) : ranges.flatMap { bytes[$0] }
      made = profile.withUnsafeBufferPointer {
        innerpeace_colour_from_icc($0.baseAddress, $0.count, model, layout)
      }
    case .compressedProfile(let range):
      guard let profile = Self.inflate(bytes, range) else { return nil }
      made = profile.withUnsafeBufferPointer {
        innerpeace_colour_from_icc($0.baseAddress, $0.count, model, layout)
      }
    case .chunks(let gamma, let chromaticities):
      made = (chromaticities ?? []).withUnsafeBufferPointer {
        innerpeace_colour_from_gamma(gamma ?? 0, chromaticities == nil ? nil : $0.baseAddress, model, layout)
      }
    }
    guard let made else { return nil }
    handle = made
  }

  deinit { innerpeace_colour_free(handle) }

  /// Converts pixels (4 bytes each, in the layout the transform was made for) in place.
  func apply(_ pixels: inout [UInt8]) {
    pixels.withUnsafeMutableBufferPointer {
      innerpeace_colour_apply(handle, $0.baseAddress, $0.count / 4)
    }
  }

  /// Converts `count` pixels from `pixels` in place.
  func apply(_ pixels: UnsafeMutablePointer<UInt8>, count: Int) {
    innerpeace_colour_apply(handle, pixels, count)
  }

  /// A zlib stream's content, if it is whole and at most ``ImageDecoding/maximumProfileBytes``.
  static func inflate(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8]? {
    guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
    defer { libdeflate_free_decompressor(decompressor) }
    var size = 0
    var result: libdeflate_result = LIBDEFLATE_BAD_DATA
    let inflated = [UInt8](unsafeUninitializedCapacity: ImageDecoding.maximumProfileBytes) { buffer, count in
      result = bytes.withUnsafeBufferPointer { source in
        libdeflate_zlib_decompress(
          decompressor, source.baseAddress! + range.lowerBound, range.count, buffer.baseAddress, buffer.count, &size)
      }
      count = result == LIBDEFLATE_SUCCESS ? size : 0
    }
    return result == LIBDEFLATE_SUCCESS ? inflated : nil
  }
}

// MARK: EXIF

/// Reads the Orientation tag of an EXIF (TIFF) structure. The bytes are hostile input: every
/// offset is checked against the structure's bounds, and anything out of place means "none".
enum Exif {
  /// The orientation, 1 to 8, from the first image directory; `nil` if there is none or the
  /// structure is damaged.
  static func orientation(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int? {
    let start = range.lowerBound
    let end = min(range.upperBound, bytes.count)
    guard start >= 0, end - start >= 8 else { return nil }
    let littleEndian: Bool
    switch (bytes[start], bytes[start + 1]) {
    case (0x49, 0x49): littleEndian = true
    case (0x4D, 0x4D): littleEndian = false
    default: return nil
    }
    func u16(_ offset: Int) -> Int? {
      guard offset >= start, offset <= end - 2 else { return nil }
      let a = Int(bytes[offset])
      let b = Int(bytes[offset + 1])
      return littleEndian ? a | b << 8 : a << 8 | b
    }
    func u32(_ offset: Int) -> Int? {
      guard let low = u16(littleEndian ? offset : offset + 2),
        let high = u16(littleEndian ? offset + 2 : offset)
      else {
        return nil
      }
      return high << 16 | low
    }
    guard u16(start + 2) == 42, let directoryOffset = u32(start + 4) else { return nil }
    let directory = start + directoryOffset
    guard let entries = u16(directory), directory + 2 + entries * 12 <= end else { return nil }
    for entry in 0..<entries {
      let at = directory + 2 + entry * 12
      guard u16(at) == 0x0112 else { continue }
      // SHORT, one value, held in the first two bytes of the value field.
      guard u16(at + 2) == 3, u32(at + 4) == 1, let value = u16(at + 8), (1...8).contains(value)
      else { return nil }
      return value
    }
    return nil
  }
}
