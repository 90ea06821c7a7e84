import InnerPeace
import NIOConcurrencyHelpers

/// Rendered cards in memory, least recently used out first, bounded by bytes (a
/// ``ByteBoundedLRU``: each card counts its bytes and its key's); and the renders in flight, so
/// identical requests that arrive together render once.
final class CardCache: Sendable {
  private struct State {
    var cards: ByteBoundedLRU<String, ServedCard>
    var inFlight: [String: Task<ServedCard, any Error>] = [:]
  }

  let capacityBytes: Int
  private let state: NIOLockedValueBox<State>

  init(capacityBytes: Int) {
    self.capacityBytes = capacityBytes
    state = NIOLockedValueBox(State(cards: ByteBoundedLRU(capacityBytes: capacityBytes)))
  }

  var byteCount: Int { state.withLockedValue { $0.cards.byteCount } }

  func store(_ card: ServedCard, for key: String) {
    _ = state.withLockedValue { $0.cards.insert(card, cost: card.byteCount + key.utf8.count, forKey: key) }
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
      if let card = state.cards.value(forKey: key) { return .cached(card) }
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
