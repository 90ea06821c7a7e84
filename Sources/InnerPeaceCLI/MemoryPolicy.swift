internal import CInnerPeaceKernels

/// How the process asks glibc's allocator to give memory back.
///
/// A card's buffers are large (a 4096x4096 canvas is 64 MiB) and short-lived. By default glibc
/// raises its mmap threshold after the first large free, so later large buffers come from the
/// heap arenas, and freed arena memory is rarely returned: a server's resident memory then grows
/// to its largest-ever working set per thread and stays there. A fixed threshold puts every
/// buffer of 128 KiB or more in a mapping of its own, which `free` returns to the system at once,
/// and a cap on arenas keeps many threads from each holding a heap of their own.
enum MemoryPolicy {
  /// Buffers at least this large get a mapping of their own.
  static let mmapThreshold: Int32 = 128 << 10
  /// The most malloc arenas (glibc's default is eight per core).
  static let maximumArenas: Int32 = 4

  static func apply() {
    _ = innerpeace_set_malloc_policy(mmapThreshold, maximumArenas)
  }
}
