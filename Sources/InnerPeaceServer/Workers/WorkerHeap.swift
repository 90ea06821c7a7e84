import CInnerPeaceProcess

/// How a render worker process keeps its heap between cards.
///
/// The process-wide memory policy (the CLI's) gives every buffer of 128 KiB or more a mapping of
/// its own, returned to the system when freed: right for a process that renders one card, or many
/// on several threads. A worker renders one card after another on one thread, and there that
/// policy unmaps a card's canvas, blur and encoder buffers after each card and faults them in
/// again, page by page, for the next: about 2,400 page faults (10 MB) for an og card, a fifth of
/// the worker's time for it. So a worker serves buffers up to ``reserveBytes`` from its heap and
/// keeps up to that much free between cards; after a card whose working set left more free than
/// that (a large preset), everything free is returned, as before.
///
/// Memory at rest (``RenderWorker/restingBytes()``, what `--worker-memory-mb` bounds) counts what
/// the worker holds for its own use: the free heap it keeps for the next card is left out, so the
/// limit still measures caches and live memory, not the reserve.
enum WorkerHeap {
  /// The most free heap memory a worker keeps between cards, and the size from which a buffer
  /// gets a mapping of its own: 32 MiB (glibc's largest mmap threshold). An og card's working set
  /// fits several times over.
  static let reserveBytes = 32 << 20

  /// Sets the allocator up for a worker; call once, before the first card.
  static func keepReserve() { _ = innerpeace_worker_heap_reserve(Int32(reserveBytes)) }

  /// After a card: returns the free heap to the system when it is more than the reserve. Returns
  /// whether the free heap was kept (the next reading of memory at rest leaves it out).
  static func settle() -> Bool {
    guard keeps(freeBytes: freeBytes) else {
      innerpeace_heap_trim()
      return false
    }
    return true
  }

  /// The heap's free bytes now.
  static var freeBytes: Int { Int(innerpeace_heap_free_bytes()) }

  /// Whether `freeBytes` of free heap are kept for the next card rather than returned.
  static func keeps(freeBytes: Int) -> Bool { freeBytes <= reserveBytes }

  /// Memory at rest that is the worker's own use: its private resident bytes less the free heap
  /// it keeps (`keptFree`, 0 after a trim: then the free heap is not resident).
  static func restingBytes(privateResident: Int, keptFree: Int) -> Int { max(0, privateResident - keptFree) }
}
