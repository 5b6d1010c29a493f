import DeallocLog

/// Row indices by name (type names, queue labels), for names that arrive once per record.
///
/// Contract: ``row(_:)`` gives each distinct name a dense row, in order of first appearance.
/// Why not only a dictionary: the reader interns names, so the same name arrives as the same
/// `String` value, bit for bit, and a small cache keyed by those bits finds the row without
/// hashing the characters. A hit is confirmed against the row's own name by bits, and that
/// name is kept alive by the index, so no other live string can share its bits; any other
/// string (decoded from an escaped field, say) misses and goes to the dictionary.
struct NameIndex {
  private var names: [String] = []
  /// Each row's name as ``bits(_:)``, so that a cache hit is confirmed without copying (and
  /// retaining) the row's `String`.
  private var nameBits: [(UInt64, UInt64)] = []
  private var byName: [String: Int] = [:]
  /// Row + 1 per slot (0: empty), probed linearly from a slot chosen by the name's bits. A
  /// slot is never overwritten; once half the slots are taken, further bits go to the
  /// dictionary only, so that a probe stays short.
  private var cache = [Int](repeating: 0, count: cacheSize)
  private var cached = 0
  private static let cacheSize = 256
  /// Lookups that missed the cache and went to the dictionary, for tests.
  private(set) var dictionaryLookups = 0

  /// The row of `name` and whether it was added by this call. Inlined (it runs twice per
  /// enqueue): a hit is a few instructions, and the miss goes out of line.
  @inline(__always)
  mutating func row(_ name: String) -> (row: Int, isNew: Bool) {
    let bits = Self.bits(name)
    var slot = Self.slot(bits)
    while true {
      let entry = cache[slot]
      if entry == 0 { return rowAfterMiss(name, bits, emptySlot: slot) }
      if nameBits[entry - 1] == bits { return (entry - 1, false) }
      slot = (slot + 1) & (Self.cacheSize - 1)
    }
  }

  @inline(never)
  private mutating func rowAfterMiss(_ name: String, _ bits: (UInt64, UInt64), emptySlot: Int)
    -> (row: Int, isNew: Bool)
  {
    dictionaryLookups += 1
    let row: Int
    let isNew: Bool
    if let known = byName[name] {
      row = known
      isNew = false
    } else {
      row = names.count
      names.append(name)
      nameBits.append(bits)
      byName[name] = row
      isNew = true
    }
    // A known name under other bits (a copy of its string) is not cached: a hit is
    // confirmed against the row's own bits.
    if nameBits[row] == bits && cached < Self.cacheSize / 2 {
      cache[emptySlot] = row + 1
      cached += 1
    }
    return (row, isNew)
  }

  /// A `String`'s two words: its small-string contents, or its storage and flags.
  @inline(__always)
  private static func bits(_ name: String) -> (UInt64, UInt64) {
    unsafeBitCast(name, to: (UInt64, UInt64).self)
  }

  @inline(__always)
  private static func slot(_ bits: (UInt64, UInt64)) -> Int {
    let mixed = WordMix.pair(bits.0, bits.1)
    return Int(truncatingIfNeeded: mixed >> 56) & (cacheSize - 1)
  }
}
