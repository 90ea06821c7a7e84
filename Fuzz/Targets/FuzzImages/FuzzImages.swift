import FuzzSupport

#if DEBUG
  import CInnerPeaceCodecs
  @testable import InnerPeace

  /// The image decoders: JPEG and PNG bytes through the header probe and, when it accepts them,
  /// a decode covering a small canvas, whole and (libjpeg's crop and skip) the part a zoomed crop
  /// shows (with libjpeg's scaled inverse DCTs in AVX-512 where the processor has it: the seeds
  /// `jpeg-part-*` decode at 5/8, 6/8 and 7/8), compared where both decode. Errors are answers;
  /// a trap, an abort, an allocation past libFuzzer's limit, a part with other pixels than the
  /// whole's, a whole decode that differs from TurboJPEG's (it goes through libjpeg's rows at 5/8
  /// to 7/8) or an AVX-512 inverse DCT that differs from libjpeg's is a crash.
  ///
  /// Input: the file's bytes, as they would be on disk (the first 257 also as one block for the
  /// inverse DCTs).
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzImages(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // libjpeg's scaled inverse DCTs against their AVX-512 forms on one block: the input's first
    // 256 bytes as its coefficients and quantization table, any 16-bit values (a file's own
    // coefficients, above, are mostly small), and the next byte as the output column.
    if size > 256 {
      let words = (0..<128).map { Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8) }
      let coefficients = Array(words[0..<64]), table = Array(words[64..<128])
      if innerpeace_jpeg_vector_idct_differs(coefficients, table, UInt32(bytes[256])) == 1 {
        fatalError("an AVX-512 inverse DCT differs from libjpeg's")
      }
    }
    guard case .success = ImageDecoding.probe(bytes) else { return 0 }
    let canvas = (width: 320, height: 200)
    let whole = try? ImageDecoding.decode(bytes, covering: canvas)
    // The whole decode (through libjpeg's rows at 5/8 to 7/8) gives TurboJPEG's outcome.
    let reference = try? ImageDecoding.decode(bytes, covering: canvas, decoder: .turboJPEG)
    if whole?.bytes != reference?.bytes || whole?.width != reference?.width {
      fatalError("the whole decode differs from TurboJPEG's")
    }
    // The crop the renderer would take at its largest zoom, in the top-left corner.
    let crop = FocusCrop(zoom: 1.3, shiftX: 0, shiftY: 0)
    let covering = (width: Int((320 * 1.3).rounded(.up)), height: Int((200 * 1.3).rounded(.up)))
    let part = try? ImageDecoding.decode(bytes, covering: covering) {
      BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
    }
    if let part, let box = part.part {
      // A part decodes only where the whole does, to the whole's pixels there.
      guard let zoomed = try? ImageDecoding.decode(bytes, covering: covering, decoder: .turboJPEG) else {
        fatalError("a part decoded where the whole decode fails")
      }
      for row in box.y..<(box.y + box.height) {
        let start = (row * zoomed.width + box.x) * 4
        let end = start + box.width * 4
        if !part.pixels.bytes[start..<end].elementsEqual(zoomed.bytes[start..<end]) {
          fatalError("the part's row \(row) differs from the whole decode's")
        }
      }
    }
    _ = whole
    return 0
  }

  @main
  enum FuzzImages {
    static func main() { FuzzDriver.main(fuzzImages) }
  }
#else
  /// The target uses the decoders' internal entry points, visible in debug builds only.
  @main
  enum FuzzImages {
    static func main() { print("FuzzImages runs in debug builds only (swift build -c debug)") }
  }
#endif
