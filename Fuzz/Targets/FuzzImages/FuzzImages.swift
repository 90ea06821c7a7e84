import FuzzSupport

#if DEBUG
  @testable import InnerPeace

  /// The image decoders: JPEG and PNG bytes through the header probe and, when it accepts them,
  /// a decode covering a small canvas. Errors are answers; a trap, an abort or an allocation
  /// past libFuzzer's limit is a crash.
  ///
  /// Input: the file's bytes, as they would be on disk.
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzImages(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard case .success = ImageDecoding.probe(bytes) else { return 0 }
    _ = try? ImageDecoding.decode(bytes, covering: (width: 320, height: 200))
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
