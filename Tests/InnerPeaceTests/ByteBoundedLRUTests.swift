import InnerPeace
import Testing

@Suite("Byte-bounded LRU")
struct ByteBoundedLRUTests {
  /// The candidates kept, least recently used first, read on a copy by adding one-byte entries
  /// until each has been evicted (a look-up would refresh recency).
  static func keysOldestFirst(_ cache: ByteBoundedLRU<String, Int>, candidates: [String]) -> [String] {
    var copy = cache
    var order: [String] = []
    var filler = 0
    while order.count < candidates.count && filler < 10_000 {
      copy.insert(0, cost: 1, forKey: "filler \(filler)")
      filler += 1
      order += candidates.filter { !copy.contains($0) && !order.contains($0) }
    }
    return order
  }

  @Test func evictsTheLeastRecentlyUsedFirst() {
    var cache = ByteBoundedLRU<String, Int>(capacityBytes: 30)
    cache.insert(1, cost: 10, forKey: "a")
    cache.insert(2, cost: 10, forKey: "b")
    cache.insert(3, cost: 10, forKey: "c")
    #expect(cache.count == 3 && cache.byteCount == 30)
    cache.insert(4, cost: 10, forKey: "d")
    #expect(!cache.contains("a"))
    #expect(cache.contains("b") && cache.contains("c") && cache.contains("d"))
    #expect(cache.byteCount == 30)
    cache.insert(5, cost: 20, forKey: "e")
    #expect(!cache.contains("b") && !cache.contains("c"), "two entries must go to make room for 20 bytes")
    #expect(cache.value(forKey: "d") == 4 && cache.value(forKey: "e") == 5)
    #expect(cache.count == 2 && cache.byteCount == 30)
  }

  @Test func aHitRefreshesRecency() {
    var cache = ByteBoundedLRU<String, Int>(capacityBytes: 30)
    cache.insert(1, cost: 10, forKey: "a")
    cache.insert(2, cost: 10, forKey: "b")
    cache.insert(3, cost: 10, forKey: "c")
    #expect(cache.value(forKey: "a") == 1)
    cache.insert(4, cost: 10, forKey: "d")
    #expect(cache.contains("a"), "a was just used")
    #expect(!cache.contains("b"), "b is now the least recently used")
    #expect(Self.keysOldestFirst(cache, candidates: ["a", "c", "d"]) == ["c", "a", "d"])
  }

  @Test func neverExceedsTheByteBound() {
    var cache = ByteBoundedLRU<Int, Int>(capacityBytes: 1_000)
    var generator = SeededGenerator(seed: 7)
    for step in 0..<5_000 {
      let key = generator.index(below: 200)
      if generator.index(below: 3) == 0 {
        _ = cache.value(forKey: key)
      } else {
        cache.insert(step, cost: generator.index(below: 300), forKey: key)
      }
      #expect(cache.byteCount <= 1_000)
      if cache.byteCount > 1_000 { return }
    }
    #expect(cache.count > 0)
  }

  @Test func anEntryLargerThanTheBoundIsNotStored() {
    var cache = ByteBoundedLRU<String, Int>(capacityBytes: 100)
    cache.insert(1, cost: 60, forKey: "a")
    #expect(cache.insert(2, cost: 101, forKey: "big") == false)
    #expect(!cache.contains("big"))
    #expect(cache.value(forKey: "a") == 1 && cache.byteCount == 60, "a refused entry must not evict others")
    #expect(cache.insert(3, cost: 101, forKey: "a") == false)
    #expect(cache.value(forKey: "a") == 1, "a refused replacement keeps the old value")
    #expect(cache.insert(4, cost: 100, forKey: "exact") == true)
    #expect(cache.count == 1 && cache.byteCount == 100 && cache.value(forKey: "exact") == 4)
  }

  @Test func replacingAKeyUpdatesValueCostAndRecency() {
    var cache = ByteBoundedLRU<String, Int>(capacityBytes: 30)
    cache.insert(1, cost: 10, forKey: "a")
    cache.insert(2, cost: 10, forKey: "b")
    cache.insert(3, cost: 5, forKey: "a")
    #expect(cache.count == 2 && cache.byteCount == 15)
    #expect(Self.keysOldestFirst(cache, candidates: ["a", "b"]) == ["b", "a"])
    cache.insert(4, cost: 25, forKey: "a")
    #expect(cache.count == 1 && cache.byteCount == 25, "growing a to 25 bytes evicts b")
    #expect(cache.value(forKey: "a") == 4)
  }

  @Test func removedSlotsAreReused() {
    var cache = ByteBoundedLRU<Int, Int>(capacityBytes: 3)
    for key in 0..<100 { cache.insert(key, cost: 1, forKey: key) }
    #expect(cache.count == 3 && cache.byteCount == 3)
    #expect(cache.contains(97) && cache.contains(98) && cache.contains(99))
    #expect(cache.removeValue(forKey: 98) == 98)
    #expect(cache.removeValue(forKey: 98) == nil)
    #expect(cache.count == 2 && cache.byteCount == 2)
    cache.insert(100, cost: 1, forKey: 100)
    cache.insert(101, cost: 1, forKey: 101)
    #expect(!cache.contains(97) && cache.contains(99) && cache.contains(100) && cache.contains(101))
  }

  @Test func aZeroCapacityKeepsOnlyFreeEntries() {
    var cache = ByteBoundedLRU<String, Int>(capacityBytes: 0)
    #expect(cache.insert(1, cost: 1, forKey: "a") == false)
    #expect(cache.count == 0 && cache.value(forKey: "a") == nil)
  }
}
