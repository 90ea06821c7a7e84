import Foundation

/// A value guarded by Foundation's `NSLock` (a pthread mutex), for the core's shared caches.
///
/// Used instead of Synchronization's `Mutex` so that ThreadSanitizer can check it: with Swift 6.3.1
/// on Linux, TSan does not see `Mutex`'s lock and reports every locked access from two threads as
/// a race, while it sees pthread mutexes (BENCHMARKS.md §4). The server uses SwiftNIO's
/// `NIOLockedValueBox` for the same reason; the core does not depend on NIO.
final class Locked<Value> {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  /// Runs `body` with the value, under the lock.
  func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
