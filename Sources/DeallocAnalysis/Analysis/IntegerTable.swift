import DeallocLog

/// A hash table from 64-bit integers (object ids, addresses) to values, for the analyzer's
/// per-object tables.
///
/// Why not `Dictionary`: its per-process seeded SipHash was a fifth of the analysis time on a
/// million-object log. Keys here are not adversarial beyond a slow report, so a multiplicative
/// hash with linear probing is enough. Deletion shifts later slots back (no tombstones), so a
/// table that sees millions of inserts and removes stays as small as its live content.
///
/// Why the values sit apart, dense, with the slots pointing at them: probing reads 16-byte
/// slots only, growing rehashes slots and moves no value, and a value costs its size once
/// instead of once per slot with an optional's padding. For tables of large values (a
/// survivor of its release) growing had been most of their cost. The trade-off: a removal
/// moves the last entry into the hole and probes once more to repoint its slot.
struct IntegerTable<Value> {
  private struct Slot {
    var key: UInt64
    /// The entry's index + 1; 0 when the slot is empty.
    var entry: UInt32
  }

  private var slots: [Slot]
  private var shift: UInt64
  /// The entries, dense and in no particular order.
  private(set) var keys: [UInt64] = []
  private var values: [Value] = []

  init() {
    slots = Array(repeating: Slot(key: 0, entry: 0), count: 16)
    shift = 64 - 4
  }

  var count: Int { values.count }
  var isEmpty: Bool { values.isEmpty }

  /// The key's first slot: the top bits of a multiplicative hash, after the key's high half
  /// is folded into its low half.
  ///
  /// Why the fold: the multiply carries every low bit of a key into the top bits kept, but
  /// the high half only through the constant's low half, which spreads small values poorly.
  /// Keys that differ mostly there (the finding origins' (stack, type) pairs) piled into a
  /// third of the slots: 59 probes a lookup on a leak-heavy log, against 2 with the fold.
  /// Keys with a zero high half (ids) hash as before; the fold costs a multiply.
  @inline(__always)
  private func home(_ key: UInt64) -> Int {
    let folded = key ^ ((key >> 32) &* WordMix.golden)
    return Int(truncatingIfNeeded: (folded &* WordMix.golden) >> shift)
  }

  @inline(__always)
  private func slot(of key: UInt64) -> Int? {
    let mask = slots.count - 1
    var index = home(key)
    while slots[index].entry != 0 {
      if slots[index].key == key { return index }
      index = (index + 1) & mask
    }
    return nil
  }

  func contains(_ key: UInt64) -> Bool { slot(of: key) != nil }

  /// How many slots a lookup of `key` reads: what tests check the hash's spread by.
  func probeCount(of key: UInt64) -> Int {
    let mask = slots.count - 1
    var index = home(key)
    var count = 1
    while slots[index].entry != 0 && slots[index].key != key {
      index = (index + 1) & mask
      count += 1
    }
    return count
  }

  subscript(key: UInt64) -> Value? {
    get { slot(of: key).map { values[Int(slots[$0].entry) - 1] } }
    set {
      if let newValue {
        insert(key, newValue)
      } else {
        _ = removeValue(forKey: key)
      }
    }
  }

  private mutating func insert(_ key: UInt64, _ value: Value) {
    if let index = slot(of: key) {
      values[Int(slots[index].entry) - 1] = value
      return
    }
    precondition(values.count < Int(UInt32.max) - 1, "more than 4 billion entries")
    if (count + 1) * 4 > slots.count * 3 { grow() }
    place(Slot(key: key, entry: UInt32(values.count + 1)))
    keys.append(key)
    values.append(value)
  }

  /// Puts `slot` at the first empty slot of its probe run.
  @inline(__always)
  private mutating func place(_ slot: Slot) {
    let mask = slots.count - 1
    var index = home(slot.key)
    while slots[index].entry != 0 { index = (index + 1) & mask }
    slots[index] = slot
  }

  @discardableResult
  mutating func removeValue(forKey key: UInt64) -> Value? {
    guard var hole = slot(of: key) else { return nil }
    let entry = Int(slots[hole].entry) - 1
    let mask = slots.count - 1
    // Backward-shift deletion: move later slots of the run into the hole when the hole lies
    // on their probe path.
    var next = (hole + 1) & mask
    while slots[next].entry != 0 {
      let wanted = home(slots[next].key)
      let distanceToNext = (next &- wanted) & mask
      let distanceToHole = (hole &- wanted) & mask
      if distanceToHole <= distanceToNext {
        slots[hole] = slots[next]
        hole = next
      }
      next = (next + 1) & mask
    }
    slots[hole] = Slot(key: 0, entry: 0)
    // The last entry fills the removed one's place, and its slot follows it.
    let last = values.count - 1
    if entry != last {
      values.swapAt(entry, last)
      keys.swapAt(entry, last)
      slots[slot(of: keys[entry])!].entry = UInt32(entry + 1)
    }
    keys.removeLast()
    return values.removeLast()
  }

  private mutating func grow() {
    let old = slots
    slots = Array(repeating: Slot(key: 0, entry: 0), count: old.count * 2)
    shift -= 1
    for slot in old where slot.entry != 0 { place(slot) }
  }

  /// The entries, in no particular order.
  var entries: [(key: UInt64, value: Value)] {
    Array(zip(keys, values))
  }

  /// Entry `position` of the dense storage: positions are `0..<count`, in no particular
  /// order, and hold until the next change.
  func entry(at position: Int) -> (key: UInt64, value: Value) {
    (keys[position], values[position])
  }

  /// `key` of each value, by storage position (see ``entry(at:)``), copying no value.
  func map<Key>(_ key: (Value) -> Key) -> [Key] {
    values.map(key)
  }
}
