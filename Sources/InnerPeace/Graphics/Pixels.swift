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

extension Pixels {
  /// The pixels of an RGB24 surface, rows packed.
  init(copying surface: ImageSurface) {
    self.init(
      width: surface.width, height: surface.height, bytes: surface.packedRows(bytesPerRow: surface.width * 4))
  }

  /// Copies the pixels over an RGB24 surface of the same size.
  func copy(into surface: ImageSurface) { surface.replaceRows(with: bytes, bytesPerRow: stride) }
}

/// The one stride copy: `rows` rows of `bytesPerRow` bytes from `source` (rows `sourceStride`
/// bytes apart) to `target` (rows `targetStride` bytes apart). One `memcpy` when both are packed
/// at that width, else one a row.
func copyRows(
  _ rows: Int, bytesPerRow: Int, from source: UnsafePointer<UInt8>, stride sourceStride: Int,
  to target: UnsafeMutablePointer<UInt8>, stride targetStride: Int
) {
  guard rows > 0, bytesPerRow > 0 else { return }
  if sourceStride == bytesPerRow && targetStride == bytesPerRow {
    target.update(from: source, count: rows * bytesPerRow)
    return
  }
  for row in 0..<rows {
    (target + row * targetStride).update(from: source + row * sourceStride, count: bytesPerRow)
  }
}
