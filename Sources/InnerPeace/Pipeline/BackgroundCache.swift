/// Decoded, scaled backgrounds, kept per picture, canvas size and crop (``FocusCrop``), least recently used first out,
/// bounded by bytes (a ``ByteBoundedLRU`` under a lock). A background larger than half the
/// capacity is not kept, so one large card cannot empty the cache of the sizes in everyday use.
/// Owned by a ``CardRenderer``; safe to share between threads.
final class BackgroundCache: Sendable {
  struct Key: Hashable, Sendable {
    let picture: String
    let width: Int
    let height: Int
    /// Where the photo was cropped: the same photo and size cropped elsewhere is another background.
    let crop: FocusCrop
  }

  let capacityBytes: Int
  private let entries: Locked<ByteBoundedLRU<Key, Pixels>>

  init(capacityBytes: Int) {
    self.capacityBytes = capacityBytes
    entries = Locked(ByteBoundedLRU(capacityBytes: capacityBytes))
  }

  /// The background kept for `key`, which becomes the most recently used; `nil` if none is kept.
  func pixels(for key: Key) -> Pixels? { entries.withLock { $0.value(forKey: key) } }

  /// Whether a background of `byteCount` bytes would be kept.
  func accepts(byteCount: Int) -> Bool { byteCount <= capacityBytes / 2 }

  /// Keeps a background (if ``accepts(byteCount:)``), evicting the least recently used ones.
  func store(_ pixels: Pixels, for key: Key) {
    guard accepts(byteCount: pixels.byteCount) else { return }
    _ = entries.withLock { $0.insert(pixels, cost: pixels.byteCount, forKey: key) }
  }

  var count: Int { entries.withLock { $0.count } }
}
