import DeallocLog

/// Which addresses a session ever enqueued, in a fixed 128 KiB: a Bloom filter.
///
/// Why: an explanation may say that no queue ever held what a check saw only when that is
/// certain, and remembering every address exactly would grow with the log. A Bloom filter's
/// "no" is certain; its "maybe" can be wrong (rarely below about 100,000 distinct addresses,
/// more often beyond), so callers state only the "no". Ids need no filter: the recorder gives a
/// check an id only for an object it saw enqueued.
struct EnqueueFilter {
  private static let wordCount = 1 << 14
  private static let bitMask: UInt64 = (1 << 20) - 1
  /// Allocated at the first enqueue. A class over raw memory: setting bits once per enqueue
  /// then costs no copy-on-write check.
  private var words: Words?

  /// The bits, and the hashes of the latest inserts not yet set in them.
  ///
  /// Why the wait: the two words an insert sets are random in 128 KiB, which the analyzer's
  /// other tables push out of the cache, so each insert waited for memory twice. Set in a
  /// loop of ``pendingCapacity`` at a time, the inserts' loads overlap. A query sets the
  /// waiting bits first, so the answers are the same.
  private final class Words {
    static let pendingCapacity = 64
    let bits = UnsafeMutablePointer<UInt64>.allocate(capacity: EnqueueFilter.wordCount)
    let pending = UnsafeMutablePointer<UInt64>.allocate(capacity: pendingCapacity)
    var pendingCount = 0

    init() { bits.initialize(repeating: 0, count: EnqueueFilter.wordCount) }

    deinit {
      bits.deallocate()
      pending.deallocate()
    }

    @inline(__always)
    func insert(_ hash: UInt64) {
      pending[pendingCount] = hash
      pendingCount += 1
      if pendingCount == Self.pendingCapacity { setPending() }
    }

    func setPending() {
      for index in 0..<pendingCount {
        let hash = pending[index]
        EnqueueFilter.set(bits, Int(hash & EnqueueFilter.bitMask))
        EnqueueFilter.set(bits, Int((hash >> 32) & EnqueueFilter.bitMask))
      }
      pendingCount = 0
    }
  }

  /// Sets two bit positions out of 2²⁰, from one 64-bit hash (no array: this runs once per
  /// enqueue).
  mutating func insert(address: Address) {
    if words == nil { words = Words() }
    words.unsafelyUnwrapped.insert(WordMix.splitMix(address.rawValue))
  }

  /// `false` when the session certainly never enqueued an object at `address`.
  func mayContain(address: Address) -> Bool {
    guard let words else { return false }
    if words.pendingCount > 0 { words.setPending() }
    let hash = WordMix.splitMix(address.rawValue)
    return Self.isSet(words.bits, Int(hash & Self.bitMask))
      && Self.isSet(words.bits, Int((hash >> 32) & Self.bitMask))
  }

  /// `bit` is below 2²⁰ (masked), so the word is inside the allocation.
  @inline(__always)
  private static func set(_ bits: UnsafeMutablePointer<UInt64>, _ bit: Int) {
    bits[bit >> 6] |= 1 << UInt64(bit & 63)
  }

  @inline(__always)
  private static func isSet(_ bits: UnsafeMutablePointer<UInt64>, _ bit: Int) -> Bool {
    bits[bit >> 6] & (1 << UInt64(bit & 63)) != 0
  }
}
