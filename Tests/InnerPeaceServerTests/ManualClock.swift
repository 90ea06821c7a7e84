import NIOConcurrencyHelpers

/// A clock that moves only when the test moves it: every sleep on it waits until ``advance(by:)``
/// takes `now` past its deadline (or its task is cancelled). Tests wait for the code under test to
/// start a sleep with ``waitForSleeper(until:)``, an event, not a guess of the time it needs.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration

    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (left: Instant, right: Instant) -> Bool { left.offset < right.offset }
  }

  private struct Sleeper {
    let deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>?
    var cancelled = false
  }

  private struct Watcher {
    let id: Int
    let deadline: Instant
    let count: Int
    let continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Int: Sleeper] = [:]
    var watchers: [Watcher] = []
    var cancelledWatchers: Set<Int> = []

    func sleeping(until deadline: Instant) -> Int {
      sleepers.values.count(where: { $0.deadline == deadline && $0.continuation != nil })
    }
  }

  private let state = NIOLockedValueBox(State())

  var now: Instant { state.withLockedValue { $0.now } }
  var minimumResolution: Duration { .zero }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLockedValue { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let (immediate, watchers) = state.withLockedValue { state -> (Result<Void, any Error>?, [Watcher]) in
          if deadline <= state.now { return (.success(()), []) }
          if state.sleepers[id]?.cancelled == true {
            state.sleepers[id] = nil
            return (.failure(CancellationError()), [])
          }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          let sleeping = state.sleeping(until: deadline)
          let (woken, kept) = state.watchers.partitioned { $0.deadline == deadline && $0.count <= sleeping }
          state.watchers = kept
          return (nil, woken)
        }
        for watcher in watchers { watcher.continuation.resume() }
        if let immediate { continuation.resume(with: immediate) }
      }
    } onCancel: {
      let continuation = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
        guard let sleeper = state.sleepers[id] else {
          state.sleepers[id] = Sleeper(deadline: deadline, cancelled: true)
          return nil
        }
        state.sleepers[id] = nil
        return sleeper.continuation
      }
      continuation?.resume(throwing: CancellationError())
    }
  }

  /// Moves `now` on, and wakes every sleep whose deadline it reaches.
  func advance(by duration: Duration) {
    let woken = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
      state.now = state.now.advanced(by: duration)
      let due = state.sleepers.filter { $0.value.deadline <= state.now && $0.value.continuation != nil }
      for id in due.keys { state.sleepers[id] = nil }
      return due.values.compactMap(\.continuation)
    }
    for continuation in woken { continuation.resume() }
  }

  /// Returns once `count` tasks sleep until exactly `deadline`, or once the waiting task is
  /// cancelled (a test's time limit), so that a test whose code never sleeps fails instead of
  /// hanging.
  func waitForSleeper(until deadline: Instant, count: Int = 1) async {
    let id = state.withLockedValue { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let now = state.withLockedValue { state -> Bool in
          if state.sleeping(until: deadline) >= count || state.cancelledWatchers.remove(id) != nil { return true }
          state.watchers.append(Watcher(id: id, deadline: deadline, count: count, continuation: continuation))
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let watcher = state.withLockedValue { state -> Watcher? in
        guard let index = state.watchers.firstIndex(where: { $0.id == id }) else {
          state.cancelledWatchers.insert(id)
          return nil
        }
        return state.watchers.remove(at: index)
      }
      watcher?.continuation.resume()
    }
  }
}

extension Array {
  /// The elements that satisfy `belongs`, and the others, each in order.
  fileprivate func partitioned(_ belongs: (Element) -> Bool) -> ([Element], [Element]) {
    var matching: [Element] = []
    var others: [Element] = []
    for element in self {
      if belongs(element) { matching.append(element) } else { others.append(element) }
    }
    return (matching, others)
  }
}
