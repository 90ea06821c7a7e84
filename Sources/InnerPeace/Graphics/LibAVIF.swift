internal import CInnerPeace

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// libavif's functions, the library opened the first time a card is encoded or decoded as AVIF.
///
/// Linked, libavif would be loaded at every process start with the libraries of its AV1 codecs
/// (libaom, dav1d, libgav1, rav1e, SVT-AV1, libyuv and theirs: 29 of the process's 85), about
/// 4 ms of CPU in every cold `render`, of which few draw an AVIF (BENCHMARKS.md, "Cold start
/// (issue 21)"). The library opened is the one of the headers the build compiled against.
struct LibAVIF: @unchecked Sendable {
  // Sendable: function pointers, set once and never changed.
  typealias ImageCreate = @convention(c) (UInt32, UInt32, UInt32, avifPixelFormat) -> UnsafeMutablePointer<avifImage>?
  typealias ImageCreateEmpty = @convention(c) () -> UnsafeMutablePointer<avifImage>?
  typealias ImageDestroy = @convention(c) (UnsafeMutablePointer<avifImage>?) -> Void
  typealias RgbImageSetDefaults =
    @convention(c) (UnsafeMutablePointer<avifRGBImage>?, UnsafePointer<avifImage>?) -> Void
  typealias ImageRGBToYUV =
    @convention(c) (UnsafeMutablePointer<avifImage>?, UnsafePointer<avifRGBImage>?) -> avifResult
  typealias ImageYUVToRGB =
    @convention(c) (UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRGBImage>?) -> avifResult
  typealias ResultToString = @convention(c) (avifResult) -> UnsafePointer<CChar>?
  typealias EncoderCreate = @convention(c) () -> UnsafeMutablePointer<avifEncoder>?
  typealias EncoderWrite =
    @convention(c) (UnsafeMutablePointer<avifEncoder>?, UnsafePointer<avifImage>?, UnsafeMutablePointer<avifRWData>?) ->
    avifResult
  typealias EncoderDestroy = @convention(c) (UnsafeMutablePointer<avifEncoder>?) -> Void
  typealias RwDataFree = @convention(c) (UnsafeMutablePointer<avifRWData>?) -> Void
  typealias DecoderCreate = @convention(c) () -> UnsafeMutablePointer<avifDecoder>?
  typealias DecoderDestroy = @convention(c) (UnsafeMutablePointer<avifDecoder>?) -> Void
  typealias DecoderReadMemory =
    @convention(c) (UnsafeMutablePointer<avifDecoder>?, UnsafeMutablePointer<avifImage>?, UnsafePointer<UInt8>?, Int) ->
    avifResult

  let imageCreate: ImageCreate
  let imageCreateEmpty: ImageCreateEmpty
  let imageDestroy: ImageDestroy
  let rgbImageSetDefaults: RgbImageSetDefaults
  let imageRGBToYUV: ImageRGBToYUV
  let imageYUVToRGB: ImageYUVToRGB
  let resultToString: ResultToString
  let encoderCreate: EncoderCreate
  let encoderWrite: EncoderWrite
  let encoderDestroy: EncoderDestroy
  let rwDataFree: RwDataFree
  let decoderCreate: DecoderCreate
  let decoderDestroy: DecoderDestroy
  let decoderReadMemory: DecoderReadMemory

  /// The library, opened on first use; `nil` when it cannot be opened.
  static let shared = LibAVIF()

  /// The shared object of the headers' version (Debian's libavif 0.11 is `libavif.so.15`, 1.x
  /// `libavif.so.16`); another version's is looked for by its development link.
  static let fileName: String = {
    let sonames: [Int32: String] = [9: "libavif.so.13", 10: "libavif.so.14", 11: "libavif.so.15"]
    return AVIF_VERSION_MAJOR >= 1 ? "libavif.so.16" : sonames[AVIF_VERSION_MINOR] ?? "libavif.so"
  }()

  /// The words libavif gives for a result.
  func text(of result: avifResult) -> String {
    resultToString(result).map { String(cString: $0) } ?? "error \(result.rawValue)"
  }

  private init?() {
    guard let handle = dlopen(LibAVIF.fileName, RTLD_NOW | RTLD_LOCAL) else { return nil }
    func function<Function>(_ name: String, _: Function.Type) -> Function? {
      dlsym(handle, name).map { unsafeBitCast($0, to: Function.self) }
    }
    guard let imageCreate = function("avifImageCreate", ImageCreate.self),
      let imageCreateEmpty = function("avifImageCreateEmpty", ImageCreateEmpty.self),
      let imageDestroy = function("avifImageDestroy", ImageDestroy.self),
      let rgbImageSetDefaults = function("avifRGBImageSetDefaults", RgbImageSetDefaults.self),
      let imageRGBToYUV = function("avifImageRGBToYUV", ImageRGBToYUV.self),
      let imageYUVToRGB = function("avifImageYUVToRGB", ImageYUVToRGB.self),
      let resultToString = function("avifResultToString", ResultToString.self),
      let encoderCreate = function("avifEncoderCreate", EncoderCreate.self),
      let encoderWrite = function("avifEncoderWrite", EncoderWrite.self),
      let encoderDestroy = function("avifEncoderDestroy", EncoderDestroy.self),
      let rwDataFree = function("avifRWDataFree", RwDataFree.self),
      let decoderCreate = function("avifDecoderCreate", DecoderCreate.self),
      let decoderDestroy = function("avifDecoderDestroy", DecoderDestroy.self),
      let decoderReadMemory = function("avifDecoderReadMemory", DecoderReadMemory.self)
    else { return nil }
    self.imageCreate = imageCreate
    self.imageCreateEmpty = imageCreateEmpty
    self.imageDestroy = imageDestroy
    self.rgbImageSetDefaults = rgbImageSetDefaults
    self.imageRGBToYUV = imageRGBToYUV
    self.imageYUVToRGB = imageYUVToRGB
    self.resultToString = resultToString
    self.encoderCreate = encoderCreate
    self.encoderWrite = encoderWrite
    self.encoderDestroy = encoderDestroy
    self.rwDataFree = rwDataFree
    self.decoderCreate = decoderCreate
    self.decoderDestroy = decoderDestroy
    self.decoderReadMemory = decoderReadMemory
  }
}
