/// A least-recently-used cache bounded by a total cost in bytes, with O(1) look-up, insertion and
/// eviction: a dictionary from key to slot, and the slots chained from newest to oldest.
///
/// A value type with no lock of its own: a cache shared between threads keeps it inside one
/// (the server's card cache in a `NIOLockedValueBox`, the core's background cache in a `Locked`).
/// It is `Sendable` when its keys and values are.
public struct ByteBoundedLRU<Key: Hashable, Value> {
  fileprivate struct Node {
    let key: Key
    var value: Value
    var cost: Int
    /// The slot of the next more recently used entry, or `nil` for the newest.
    var newer: Int?
    /// The slot of the next less recently used entry, or `nil` for the oldest.
    var older: Int?
  }

  /// The largest total cost kept; an entry that costs more on its own is never stored.
  public let capacityBytes: Int
  /// The total cost of the entries kept, never more than ``capacityBytes``.
  public private(set) var byteCount = 0

  /// Entries by slot; `nil` for a free slot (listed in `freeSlots`).
  private var nodes: [Node?] = []
  private var freeSlots: [Int] = []
  private var slots: [Key: Int] = [:]
  private var newest: Int?
  private var oldest: Int?

  /// An empty cache that keeps at most `capacityBytes` of cost.
  public init(capacityBytes: Int) { self.capacityBytes = capacityBytes }

  /// The number of entries kept.
  public var count: Int { slots.count }

  /// Whether the cache holds `key` (without making it the most recently used).
  public func contains(_ key: Key) -> Bool { slots[key] != nil }

  /// The value kept for `key`, which becomes the most recently used entry; `nil` if there is none.
  public mutating func value(forKey key: Key) -> Value? {
    guard let slot = slots[key] else { return nil }
    moveToNewest(slot)
    return nodes[slot]!.value
  }

  /// Keeps `value` for `key` as the most recently used entry, replacing any value it had, then
  /// evicts the least recently used entries until the total cost is within ``capacityBytes``.
  ///
  /// A value that costs more than ``capacityBytes`` on its own is not stored, and the cache is
  /// left as it was (an older value for `key` stays).
  /// - Parameters:
  ///   - value: The value to keep.
  ///   - cost: What the entry counts against ``capacityBytes``, in bytes; not negative.
  ///   - key: The key to keep it under.
  /// - Returns: Whether the value was stored.
  @discardableResult
  public mutating func insert(_ value: Value, cost: Int, forKey key: Key) -> Bool {
    precondition(cost >= 0, "a cache entry's cost cannot be negative")
    guard cost <= capacityBytes else { return false }
    if let slot = slots[key] {
      byteCount += cost - nodes[slot]!.cost
      nodes[slot]!.value = value
      nodes[slot]!.cost = cost
      moveToNewest(slot)
    } else {
      let node = Node(key: key, value: value, cost: cost, newer: nil, older: newest)
      let slot: Int
      if let free = freeSlots.popLast() {
        slot = free
        nodes[slot] = node
      } else {
        slot = nodes.count
        nodes.append(node)
      }
      if let newest { nodes[newest]!.newer = slot }
      newest = slot
      if oldest == nil { oldest = slot }
      slots[key] = slot
      byteCount += cost
    }
    while byteCount > capacityBytes, let oldest { remove(slot: oldest) }
    return true
  }

  /// Removes the entry for `key` and returns its value, or `nil` if there was none.
  @discardableResult
  public mutating func removeValue(forKey key: Key) -> Value? {
    guard let slot = slots[key] else { return nil }
    return remove(slot: slot)
  }

  @discardableResult
  private mutating func remove(slot: Int) -> Value {
    let node = nodes[slot]!
    unlink(node)
    nodes[slot] = nil
    freeSlots.append(slot)
    slots[node.key] = nil
    byteCount -= node.cost
    return node.value
  }

  /// Takes a node out of the recency chain (its own links are left as they were).
  private mutating func unlink(_ node: Node) {
    if let newer = node.newer { nodes[newer]!.older = node.older } else { newest = node.older }
    if let older = node.older { nodes[older]!.newer = node.newer } else { oldest = node.newer }
  }

  private mutating func moveToNewest(_ slot: Int) {
    guard newest != slot else { return }
    unlink(nodes[slot]!)
    nodes[slot]!.older = newest
    nodes[slot]!.newer = nil
    if let newest { nodes[newest]!.newer = slot }
    newest = slot
  }
}

extension ByteBoundedLRU: Sendable where Key: Sendable, Value: Sendable {}
extension ByteBoundedLRU.Node: Sendable where Key: Sendable, Value: Sendable {}
