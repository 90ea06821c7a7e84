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

/// A surface lent to a ``BackgroundWork``: the thread that lends it leaves it alone until it has
/// waited for that work, which is what makes handing it over safe (a Cairo surface may be used on
/// any thread, one at a time).
struct LentSurface: @unchecked Sendable {
  let surface: ImageSurface
  init(_ surface: ImageSurface) { self.surface = surface }
}
