/// Decoded, scaled backgrounds, kept per picture and canvas size, least recently used first out,
/// bounded by bytes. A background larger than half the capacity is not kept, so one large card
/// cannot empty the cache of the sizes in everyday use. Owned by a ``CardRenderer``; safe to share between threads.
final class BackgroundCache: Sendable {
  struct Key: Hashable {
    let picture: String
    let width: Int
    let height: Int
  }

  private struct State {
    var entries: [Key: (pixels: Pixels, lastUse: UInt64)] = [:]
    var bytes = 0
    var clock: UInt64 = 0
  }

  let capacityBytes: Int
  private let state = Locked(State())

  init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

  func pixels(for key: Key) -> Pixels? {
    state.withLock { state in
      guard let entry = state.entries[key] else { return nil }
      state.clock += 1
      state.entries[key] = (entry.pixels, state.clock)
      return entry.pixels
    }
  }

  /// Whether a background of `byteCount` bytes would be kept.
  func accepts(byteCount: Int) -> Bool { byteCount <= capacityBytes / 2 }

  func store(_ pixels: Pixels, for key: Key) {
    guard accepts(byteCount: pixels.byteCount) else { return }
    state.withLock { state in
      state.clock += 1
      if let old = state.entries.updateValue((pixels, state.clock), forKey: key) {
        state.bytes -= old.pixels.byteCount
      }
      state.bytes += pixels.byteCount
      while state.bytes > capacityBytes,
        let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
      {
        state.entries[oldest.key] = nil
        state.bytes -= oldest.value.pixels.byteCount
      }
    }
  }

  var count: Int { state.withLock { $0.entries.count } }
}
