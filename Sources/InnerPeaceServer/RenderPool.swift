import InnerPeace
import NIOPosix
import Synchronization

/// Runs renders off the event loop on a fixed number of threads, behind an admission limit.
///
/// At most `workers + queueDepth` renders are admitted at once; past that, ``admit()`` fails at
/// once so the caller can answer 503 instead of queueing without bound.
final class RenderPool: Sendable {
  let workers: Int
  let queueDepth: Int
  private let threads: NIOThreadPool
  private let admitted = Mutex(0)

  init(workers: Int, queueDepth: Int) {
    self.workers = workers
    self.queueDepth = queueDepth
    threads = NIOThreadPool(numberOfThreads: workers)
    threads.start()
  }

  /// Renders admitted and not yet finished (running or waiting for a thread).
  var load: Int { admitted.withLock { $0 } }

  /// A slot for one render, or `nil` when the pool and its queue are full.
  func admit() -> Admission? {
    let granted = admitted.withLock { count -> Bool in
      guard count < workers + queueDepth else { return false }
      count += 1
      return true
    }
    return granted ? Admission(pool: self) : nil
  }

  fileprivate func release() { admitted.withLock { $0 -= 1 } }

  /// Runs `work` on a pool thread.
  func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await threads.runIfActive(work)
  }

  func shutdown() async throws { try await threads.shutdownGracefully() }

  /// One admitted render; release it exactly once when the render is over.
  final class Admission: Sendable {
    private let pool: RenderPool
    private let released = Mutex(false)

    fileprivate init(pool: RenderPool) { self.pool = pool }

    func release() {
      let first = released.withLock { done -> Bool in
        defer { done = true }
        return !done
      }
      if first { pool.release() }
    }

    deinit { release() }
  }
}
