import Dispatch

/// A value computed on another thread (Dispatch's global queue), started at once and waited for
/// by the thread that needs it (``CardRenderer/renderOne(_:catalog:fontsDirectory:)``).
final class BackgroundWork<Value: Sendable>: Sendable {
  private let group = DispatchGroup()
  private let result = Locked<Value?>(nil)

  /// Starts `work` on another thread.
  init(_ work: @escaping @Sendable () -> Value) {
    group.enter()
    DispatchQueue.global().async { [self] in
      let value = work()
      result.withLock { $0 = value }
      group.leave()
    }
  }

  /// Waits for the value.
  func wait() -> Value {
    group.wait()
    return result.withLock { $0! }
  }
}
