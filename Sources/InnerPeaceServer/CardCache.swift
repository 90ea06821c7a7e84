import NIOConcurrencyHelpers

/// Rendered cards in memory, least recently used out first, bounded by bytes; and the renders in
/// flight, so identical requests that arrive together render once.
final class CardCache: Sendable {
  struct Entry: Sendable {
    let card: ServedCard
    var lastUse: UInt64
  }

  private struct State {
    var entries: [String: Entry] = [:]
    var bytes = 0
    var clock: UInt64 = 0
    var inFlight: [String: Task<ServedCard, any Error>] = [:]
  }

  let capacityBytes: Int
  private let state = NIOLockedValueBox(State())

  init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

  var byteCount: Int { state.withLockedValue { $0.bytes } }

  func store(_ card: ServedCard, for key: String) {
    let size = card.byteCount + key.utf8.count
    guard size <= capacityBytes else { return }
    state.withLockedValue { state in
      state.clock += 1
      if let old = state.entries.updateValue(Entry(card: card, lastUse: state.clock), forKey: key) {
        state.bytes -= old.card.byteCount + key.utf8.count
      }
      state.bytes += size
      while state.bytes > capacityBytes, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
        state.entries[oldest.key] = nil
        state.bytes -= oldest.value.card.byteCount + oldest.key.utf8.count
      }
    }
  }

  /// How a card was obtained.
  enum Source: Sendable { case cache, render, joined }

  /// The cached card for `key`, or the result of an identical render already in flight, or a new
  /// render made by `render` (which is called only when neither exists).
  func card(
    for key: String, render: @escaping @Sendable () async throws -> ServedCard
  ) async throws -> (ServedCard, Source) {
    enum Plan { case cached(ServedCard), join(Task<ServedCard, any Error>), lead(Task<ServedCard, any Error>) }
    let plan = state.withLockedValue { state -> Plan in
      if var entry = state.entries[key] {
        state.clock += 1
        entry.lastUse = state.clock
        state.entries[key] = entry
        return .cached(entry.card)
      }
      if let task = state.inFlight[key] { return .join(task) }
      let task = Task { try await render() }
      state.inFlight[key] = task
      return .lead(task)
    }
    switch plan {
    case .cached(let card):
      return (card, .cache)
    case .join(let task):
      return (try await task.value, .joined)
    case .lead(let task):
      do {
        let card = try await task.value
        if capacityBytes > 0 { store(card, for: key) }
        _ = state.withLockedValue { $0.inFlight.removeValue(forKey: key) }
        return (card, .render)
      } catch {
        _ = state.withLockedValue { $0.inFlight.removeValue(forKey: key) }
        throw error
      }
    }
  }
}
