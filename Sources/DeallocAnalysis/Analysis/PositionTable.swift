import DeallocLog

/// An open-addressing hash table (linear probing, deletion by tombstone) from 64-bit keys to
/// positions in storage the caller owns, where the keys live: each lookup passes a closure
/// that reads the key at a position.
///
/// Why keys elsewhere: a slot is 8 bytes (a 32-bit position and 32 bits of the key's hash)
/// instead of a key and a value, for tables that index every unreleased object of a session.
/// The hash bits make a probe past another key cost no read of the caller's storage (a cache
/// miss) unless the bits match, and let the table grow and delete without reading keys.
///
/// Two ways to place keys: ``Placement/scattered`` (a multiplicative hash, for addresses,
/// which cluster) and ``Placement/sequential`` (for object ids, which a recorder hands out in
/// order): blocks of 16 consecutive ids fill 16 neighbouring slots, so enqueues touch the
/// table's memory a cache line at a time instead of missing the cache each time, and the
/// blocks are scattered, so a new id does not land on the run of older ids still in the table
/// (as it did when the low bits alone placed it: on a log with a stalled queue, finding an id
/// walked that run). The trade-off: ids that are far from sequential probe as scattered keys
/// do. At most 2³² − 2 positions.
///
/// Why tombstones: sequential ids sit in one run of occupied slots (every object in a queue),
/// and a backward-shift deletion walks to the run's end on every release, the whole queue's
/// length each time. A tombstone costs one store; the table is rebuilt at its size when
/// tombstones and keys together pass the load limit, so probes stay short.
struct PositionTable {
  enum Placement {
    case scattered
    case sequential
  }

  private let placement: Placement
  /// `hashBits << 32 | (position + 1)` per slot; 0 when empty. Empty until the first insert,
  /// so that an empty table costs no allocation.
  private var slots: [UInt64] = []
  /// 64 minus the bits of a slot index (scattered placement): at least 32, so that a home is
  /// the top bits of the stored hash bits.
  private var shift: UInt64 = 64 - 4
  private var count = 0
  private var tombstones = 0

  /// A removed key's slot: no position is `2³² − 1` (position + 1 stored), so no key's slot
  /// equals it.
  private static let tombstone: UInt64 = 0xFFFF_FFFF

  init(_ placement: Placement) {
    self.placement = placement
  }

  /// The 32 hash bits stored with a key.
  @inline(__always)
  private func hashBits(_ key: UInt64) -> UInt64 {
    switch placement {
    case .scattered: return (key &* WordMix.golden) >> 32
    case .sequential: return key & 0xFFFF_FFFF
    }
  }

  /// The slot where probing for a key with these hash bits starts.
  @inline(__always)
  private func home(_ bits: UInt64) -> Int {
    switch placement {
    case .scattered: return Int(truncatingIfNeeded: bits >> (shift - 32))
    case .sequential:
      // Blocks of 16 consecutive ids keep their order in 16 neighbouring slots (two cache
      // lines), and the blocks are scattered by a multiplicative hash: ids placed by their
      // low bits alone wrapped onto the slots of older ids still in the table (objects
      // stuck in a stalled queue), and a new id probed through their whole run.
      let block = ((bits >> 4) &* WordMix.golden) >> (shift + 4)
      return Int(truncatingIfNeeded: block << 4 | bits & 15)
    }
  }

  /// The position stored under `key`.
  @inline(__always)
  func find(_ key: UInt64, _ keyOf: (Int) -> UInt64) -> Int? {
    slot(of: key, keyOf).map { Int(truncatingIfNeeded: slots[$0] & 0xFFFF_FFFF) - 1 }
  }

  @inline(__always)
  private func slot(of key: UInt64, _ keyOf: (Int) -> UInt64) -> Int? {
    guard !slots.isEmpty else { return nil }
    let bits = hashBits(key)
    let mask = slots.count - 1
    var index = home(bits)
    while true {
      let slot = slots[index]
      if slot == 0 { return nil }
      if slot != Self.tombstone && slot >> 32 == bits
        && keyOf(Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1) == key
      {
        return index
      }
      index = (index + 1) & mask
    }
  }

  /// Stores `position` under `key`. With `replacing`, a position already under `key` is
  /// replaced; without, the caller guarantees that `key` is absent.
  ///
  /// One probe either way: a replacing insert looks for the key and remembers the first
  /// tombstone on the way, where the key goes when it is absent.
  mutating func insert(
    _ position: Int, key: UInt64, replacing: Bool = false, _ keyOf: (Int) -> UInt64
  ) {
    precondition(position < Int(UInt32.max) - 1, "more than 4 billion positions")
    let bits = hashBits(key)
    let value = bits << 32 | UInt64(position + 1)
    if (count + tombstones + 1) * 10 > slots.count * 7 { rebuild() }
    let mask = slots.count - 1
    var index = home(bits)
    var free: Int?
    while true {
      let slot = slots[index]
      if slot == 0 { break }
      if slot == Self.tombstone {
        if !replacing { break }
        if free == nil { free = index }
      } else if replacing && slot >> 32 == bits
        && keyOf(Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1) == key
      {
        slots[index] = value
        return
      }
      index = (index + 1) & mask
    }
    let target = free ?? index
    if slots[target] == Self.tombstone { tombstones -= 1 }
    slots[target] = value
    count += 1
  }

  /// Removes `key`; returns the position it held.
  @discardableResult
  mutating func remove(key: UInt64, _ keyOf: (Int) -> UInt64) -> Int? {
    guard let index = slot(of: key, keyOf) else { return nil }
    return remove(at: index)
  }

  @discardableResult
  private mutating func remove(at index: Int) -> Int {
    let removed = Int(truncatingIfNeeded: slots[index] & 0xFFFF_FFFF) - 1
    // The end of a run needs no tombstone: no probe continues past an empty slot.
    if slots[(index + 1) & (slots.count - 1)] == 0 {
      slots[index] = 0
    } else {
      slots[index] = Self.tombstone
      tombstones += 1
    }
    count -= 1
    return removed
  }

  /// A position for ``renumber(_:)`` that removes its key.
  static let dropped = UInt32.max

  /// Replaces every stored position `p` by `renumbered[p]`, and removes the keys whose
  /// position becomes ``dropped``.
  mutating func renumber(_ renumbered: [UInt32]) {
    for index in slots.indices where slots[index] != 0 && slots[index] != Self.tombstone {
      let position = Int(truncatingIfNeeded: slots[index] & 0xFFFF_FFFF) - 1
      if renumbered[position] == Self.dropped {
        slots[index] = Self.tombstone
        tombstones += 1
        count -= 1
      } else {
        slots[index] = slots[index] & ~0xFFFF_FFFF | UInt64(renumbered[position] + 1)
      }
    }
  }

  /// Rehashes without tombstones, at twice the size when the keys alone fill more than half
  /// of the load limit, else at the same size.
  private mutating func rebuild() {
    let old = slots
    let grows = old.isEmpty || (count + 1) * 20 > old.count * 7
    slots = [UInt64](repeating: 0, count: grows ? max(16, old.count * 2) : old.count)
    if grows && !old.isEmpty { shift -= 1 }
    tombstones = 0
    let mask = slots.count - 1
    for value in old where value != 0 && value != Self.tombstone {
      var index = home(value >> 32)
      while slots[index] != 0 { index = (index + 1) & mask }
      slots[index] = value
    }
  }
}
