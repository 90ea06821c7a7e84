import CInnerPeace
import InnerPeace
import NIOConcurrencyHelpers
import NIOCore

/// Response bodies compressed as gzip (RFC 1952) with libdeflate, the compressor the card
/// encoders already link. A body sent with a strong ETag names its bytes, so its compressed form
/// is kept by that tag in a bounded LRU and made once (a `/quotes` page, a feed, a report); a body
/// without one is compressed each time.
final class GzipBodies: Sendable {
  private let kept: NIOLockedValueBox<ByteBoundedLRU<String, ByteBuffer>>

  /// - Parameter capacityBytes: the most compressed bytes kept (4 MiB: every page of a
  ///   40,000-quote catalog for a few origins, compressed about eight times).
  init(capacityBytes: Int = 4 << 20) {
    kept = NIOLockedValueBox(ByteBoundedLRU(capacityBytes: capacityBytes))
  }

  /// `body` compressed, from the cache when `etag` (the identity body's strong tag) was seen;
  /// `nil` when libdeflate cannot allocate a compressor (out of memory).
  func compressed(_ body: ByteBuffer, etag: String?) -> ByteBuffer? {
    let key = etag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
    if let key, let found = kept.withLockedValue({ $0.value(forKey: key) }) { return found }
    guard let result = Self.gzip(body) else { return nil }
    if let key { kept.withLockedValue { _ = $0.insert(result, cost: result.readableBytes, forKey: key) } }
    return result
  }

  /// Bodies kept.
  var count: Int { kept.withLockedValue { $0.count } }

  /// The compression level: libdeflate's default, 6 (`/quotes`: 51,583 bytes to 9,034).
  static var level: Int32 { 6 }

  /// `body` as one gzip member; `nil` when no compressor can be allocated.
  static func gzip(_ body: ByteBuffer) -> ByteBuffer? {
    guard let compressor = libdeflate_alloc_compressor(level) else { return nil }
    defer { libdeflate_free_compressor(compressor) }
    return body.withUnsafeReadableBytes { input in
      let bound = libdeflate_gzip_compress_bound(compressor, input.count)
      var output = ByteBuffer()
      let written = output.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { out in
        libdeflate_gzip_compress(compressor, input.baseAddress, input.count, out.baseAddress, out.count)
      }
      // The bound is enough for any input: a 0 (no room) cannot happen.
      precondition(written > 0, "libdeflate's bound was too small")
      return output
    }
  }
}
