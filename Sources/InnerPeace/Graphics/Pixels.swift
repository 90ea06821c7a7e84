/// Decoded pixels as Cairo's RGB24 wants them: 4 bytes a pixel, B G R X in memory, rows packed.
///
/// A value type, so a decoded and scaled background can be cached and shared across threads.
struct Pixels: Sendable {
  let width: Int
  let height: Int
  /// `width * 4` bytes a row, `height` rows.
  var bytes: [UInt8]

  var stride: Int { width * 4 }
  var byteCount: Int { bytes.count }
}
