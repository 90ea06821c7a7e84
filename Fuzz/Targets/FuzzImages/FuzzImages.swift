import FuzzSupport

#if DEBUG
  @testable import InnerPeace

  /// The image decoders: JPEG and PNG bytes through the header probe and, when it accepts them,
  /// a decode covering a small canvas, whole and (libjpeg's crop and skip) the part a zoomed crop
  /// shows, compared where both decode; and a taller crop's part in one piece and in two halves
  /// at once, compared. Errors are answers; a trap, an abort, an allocation past libFuzzer's
  /// limit or a part with other pixels than the whole's (or the halves' than one piece's) is a
  /// crash.
  ///
  /// Input: the file's bytes, as they would be on disk.
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzImages(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard case .success = ImageDecoding.probe(bytes) else { return 0 }
    let canvas = (width: 320, height: 200)
    let whole = try? ImageDecoding.decode(bytes, covering: canvas)
    // The crop the renderer would take at its largest zoom, in the top-left corner.
    let crop = FocusCrop(zoom: 1.3, shiftX: 0, shiftY: 0)
    let covering = (width: Int((320 * 1.3).rounded(.up)), height: Int((200 * 1.3).rounded(.up)))
    let part = try? ImageDecoding.decode(bytes, covering: covering) {
      BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
    }
    if let part, let box = part.part {
      // A part decodes only where the whole does, to the whole's pixels there.
      guard let zoomed = try? ImageDecoding.decode(bytes, covering: covering) else {
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
    // In two halves at once (the command line's decode of a zoomed crop), on a canvas tall
    // enough to split: the same outcome and, where it decodes, the same pixels as in one piece.
    let tall = (width: 200, height: 400)
    let tallCovering = (width: Int((200 * 1.3).rounded(.up)), height: Int((400 * 1.3).rounded(.up)))
    let shown: ((width: Int, height: Int)) -> (x: Int, y: Int, width: Int, height: Int)? = {
      BackgroundScaler.shownPart(decoded: $0, canvas: tall, crop: crop)
    }
    let onePiece = try? ImageDecoding.decode(bytes, covering: tallCovering, part: shown)
    let halves = try? ImageDecoding.decode(bytes, covering: tallCovering, threads: 2, part: shown)
    if (onePiece == nil) != (halves == nil) {
      fatalError("the halves decoded where one piece did not, or not where it did")
    }
    if let onePiece, let halves {
      let sameBox =
        switch (onePiece.part, halves.part) {
        case (nil, nil): true
        case (let a?, let b?): a == b
        default: false
        }
      if !sameBox { fatalError("the halves decoded another part than one piece") }
      let box = onePiece.part ?? (0, 0, onePiece.pixels.width, onePiece.pixels.height)
      for row in box.y..<(box.y + box.height) {
        let start = (row * onePiece.pixels.width + box.x) * 4
        let end = start + box.width * 4
        if !onePiece.pixels.bytes[start..<end].elementsEqual(halves.pixels.bytes[start..<end]) {
          fatalError("the halves' row \(row) differs from the one-piece decode's")
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
