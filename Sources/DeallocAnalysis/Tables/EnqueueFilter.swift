import DeallocLog

/// Which addresses a session ever enqueued, in a fixed 128 KiB: a Bloom filter.
///
/// Contract: ``mayContain(address:)`` is `false` only for an address never inserted; its
/// `true` can be wrong (rarely below about 100,000 distinct addresses, more often beyond), so
/// callers state only the "no". Why not exact: remembering every address would grow with the
/// log. Ids need no filter: the recorder gives a check an id only for an object it saw
/// enqueued.
struct EnqueueFilter {
  private static let wordCount = 1 << 14
  private static let bitMask: UInt64 = (1 << 20) - 1
  /// Allocated at the first enqueue.
  private var words: [UInt64] = []

  /// Sets two bit positions out of 2²⁰, from one 64-bit hash.
  mutating func insert(address: Address) {
    if words.isEmpty { words = Array(repeating: 0, count: Self.wordCount) }
    let hash = WordMix.splitMix(address.rawValue)
    Self.set(&words, Int(hash & Self.bitMask))
    Self.set(&words, Int((hash >> 32) & Self.bitMask))
  }

  /// `false` when the session certainly never enqueued an object at `address`.
  func mayContain(address: Address) -> Bool {
    guard !words.isEmpty else { return false }
    let hash = WordMix.splitMix(address.rawValue)
    return Self.isSet(words, Int(hash & Self.bitMask))
      && Self.isSet(words, Int((hash >> 32) & Self.bitMask))
  }

  @inline(__always)
  private static func set(_ words: inout [UInt64], _ bit: Int) {
    words[bit >> 6] |= 1 << UInt64(bit & 63)
  }

  @inline(__always)
  private static func isSet(_ words: [UInt64], _ bit: Int) -> Bool {
    words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
  }
}
