/// A hash table from 64-bit integers (object ids, addresses) to values, for the analyzer's
/// per-object tables.
///
/// Why not `Dictionary`: its per-process seeded SipHash was a fifth of the analysis time on a
/// million-object log. Keys here are not adversarial beyond a slow report, so a multiplicative
/// hash with linear probing is enough. Deletion shifts later entries back (no tombstones),
/// so a table that sees millions of inserts and removes stays as small as its live content.
struct IntegerTable<Value> {
  private var keys: [UInt64]
  private var values: [Value?]
  private var occupied: [Bool]
  private(set) var count = 0
  private var shift: UInt64

  init() {
    keys = Array(repeating: 0, count: 16)
    values = Array(repeating: nil, count: 16)
    occupied = Array(repeating: false, count: 16)
    shift = 64 - 4
  }

  var isEmpty: Bool { count == 0 }

  @inline(__always)
  private func home(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  @inline(__always)
  private func slot(of key: UInt64) -> Int? {
    let mask = keys.count - 1
    var index = home(key)
    while occupied[index] {
      if keys[index] == key { return index }
      index = (index + 1) & mask
    }
    return nil
  }

  func contains(_ key: UInt64) -> Bool { slot(of: key) != nil }

  subscript(key: UInt64) -> Value? {
    get { slot(of: key).flatMap { values[$0] } }
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
      values[index] = value
      return
    }
    if (count + 1) * 4 > keys.count * 3 { grow() }
    let mask = keys.count - 1
    var index = home(key)
    while occupied[index] { index = (index + 1) & mask }
    occupied[index] = true
    keys[index] = key
    values[index] = value
    count += 1
  }

  @discardableResult
  mutating func removeValue(forKey key: UInt64) -> Value? {
    guard var hole = slot(of: key) else { return nil }
    let removed = values[hole]
    let mask = keys.count - 1
    // Backward-shift deletion: move later entries of the run into the hole when the hole
    // lies on their probe path.
    var next = (hole + 1) & mask
    while occupied[next] {
      let wanted = home(keys[next])
      let distanceToNext = (next &- wanted) & mask
      let distanceToHole = (hole &- wanted) & mask
      if distanceToHole <= distanceToNext {
        keys[hole] = keys[next]
        values[hole] = values[next]
        hole = next
      }
      next = (next + 1) & mask
    }
    occupied[hole] = false
    values[hole] = nil
    count -= 1
    return removed
  }

  private mutating func grow() {
    let oldKeys = keys
    let oldValues = values
    let oldOccupied = occupied
    let capacity = keys.count * 2
    keys = Array(repeating: 0, count: capacity)
    values = Array(repeating: nil, count: capacity)
    occupied = Array(repeating: false, count: capacity)
    shift -= 1
    count = 0
    for index in oldKeys.indices where oldOccupied[index] {
      insert(oldKeys[index], oldValues[index]!)
    }
  }

  /// The entries, in no particular order.
  var entries: [(key: UInt64, value: Value)] {
    keys.indices.compactMap { occupied[$0] ? (keys[$0], values[$0]!) : nil }
  }
}
