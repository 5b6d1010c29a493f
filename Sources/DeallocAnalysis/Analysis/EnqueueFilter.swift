/// Which addresses and object ids a session ever enqueued, in a fixed 128 KiB: a Bloom filter.
///
/// Why: an explanation may say that no queue ever held what a check saw only when that is
/// certain, and remembering every address exactly would grow with the log. A Bloom filter's
/// "no" is certain; its "maybe" can be wrong (rarely below about 100,000 distinct addresses and
/// ids, more often beyond), so callers state only the "no".
struct EnqueueFilter {
  private static let wordCount = 1 << 14
  private static let bitMask: UInt64 = (1 << 20) - 1
  private var words: [UInt64] = []

  mutating func insert(address: Address) { insert(Self.mix(address.rawValue)) }
  mutating func insert(id: UInt64) { insert(Self.mix(id ^ 0x5bd1_e995_a5a5_a5a5)) }

  /// `false` when the session certainly never enqueued an object at `address`.
  func mayContain(address: Address) -> Bool { mayContain(Self.mix(address.rawValue)) }
  /// `false` when the session certainly never enqueued an object with `id`.
  func mayContain(id: UInt64) -> Bool { mayContain(Self.mix(id ^ 0x5bd1_e995_a5a5_a5a5)) }

  /// Three bit positions out of 2²⁰ from one 64-bit hash, set (no array: this runs once per
  /// enqueue).
  private mutating func insert(_ hash: UInt64) {
    if words.isEmpty { words = Array(repeating: 0, count: Self.wordCount) }
    set(Int(hash & Self.bitMask))
    set(Int((hash >> 20) & Self.bitMask))
    set(Int((hash >> 40) & Self.bitMask))
  }

  private func mayContain(_ hash: UInt64) -> Bool {
    guard !words.isEmpty else { return false }
    return isSet(Int(hash & Self.bitMask)) && isSet(Int((hash >> 20) & Self.bitMask))
      && isSet(Int((hash >> 40) & Self.bitMask))
  }

  @inline(__always)
  private mutating func set(_ bit: Int) { words[bit >> 6] |= 1 << UInt64(bit & 63) }

  @inline(__always)
  private func isSet(_ bit: Int) -> Bool { words[bit >> 6] & (1 << UInt64(bit & 63)) != 0 }

  /// SplitMix64's finalizer: neighbouring addresses land far apart.
  private static func mix(_ key: UInt64) -> UInt64 {
    var z = key &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
