import Dispatch
import NIOConcurrencyHelpers

/// A value that changes as things happen (what a process wrote on stderr, log lines), and the
/// tasks waiting for it to reach some state: each wait is resumed by the change that brings that
/// state, never by polling. The timeout of a wait is a hang guard only, never a measured time.
final class Watched<Value: Sendable>: Sendable {
  /// A waiting task: resumes it (and says so) when the value is what it waits for, or with
  /// nothing once its hang guard has expired (`expired`).
  private typealias Waiter = @Sendable (_ value: Value, _ expired: Bool) -> Bool

  private struct State {
    var value: Value
    var waiters: [Int: Waiter] = [:]
    var nextWaiter = 0
  }

  private let state: NIOLockedValueBox<State>

  init(_ value: Value) { state = NIOLockedValueBox(State(value: value)) }

  /// The value now.
  var value: Value { state.withLockedValue { $0.value } }

  /// Changes the value and resumes every wait that the new value ends.
  func update(_ change: (inout Value) -> Void) {
    state.withLockedValue { state in
      change(&state.value)
      let value = state.value
      state.waiters = state.waiters.filter { !$0.value(value, false) }
    }
  }

  /// What `found` finds in the value, as soon as it finds something (checked now and after every
  /// change); nil if nothing is found within `timeout` (a hang guard).
  func wait<T: Sendable>(timeout: Duration = .seconds(30), for found: @escaping @Sendable (Value) -> T?) async -> T? {
    await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
      let waiter = state.withLockedValue { state -> Int? in
        if let result = found(state.value) {
          continuation.resume(returning: result)
          return nil
        }
        let id = state.nextWaiter
        state.nextWaiter += 1
        state.waiters[id] = { value, expired in
          if expired {
            continuation.resume(returning: nil)
            return true
          }
          guard let result = found(value) else { return false }
          continuation.resume(returning: result)
          return true
        }
        return id
      }
      guard let waiter else { return }
      let (seconds, attoseconds) = timeout.components
      let guardDelay = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
      DispatchQueue.global().asyncAfter(deadline: .now() + guardDelay) { [self] in
        state.withLockedValue { state in
          guard let expire = state.waiters.removeValue(forKey: waiter) else { return }
          _ = expire(state.value, true)
        }
      }
    }
  }
}
