/// The ids of the stacks a session defined, asked once per enqueue.
///
/// Why not the stack dictionary itself: looking an id up there hashed it with SipHash on
/// every enqueue. The recorder numbers stacks from 1 upwards, so ids below
/// ``denseLimit`` are bits in a growing bitmap (a bit per id ever defined, at most 128 KiB);
/// any other id, from a log written by something else, goes to a set.
struct StackIDSet {
  static let denseLimit: Int64 = 1 << 20

  private var words: [UInt64] = []
  private var sparse: Set<Int64> = []

  mutating func insert(_ id: Int64) {
    guard id >= 0 && id < Self.denseLimit else {
      sparse.insert(id)
      return
    }
    let word = Int(id >> 6)
    if word >= words.count {
      words.append(
        contentsOf: repeatElement(0, count: max(word + 1, words.count * 2) - words.count))
    }
    words[word] |= 1 << UInt64(id & 63)
  }

  func contains(_ id: Int64) -> Bool {
    guard id >= 0 && id < Self.denseLimit else { return sparse.contains(id) }
    let word = Int(id >> 6)
    return word < words.count && words[word] & (1 << UInt64(id & 63)) != 0
  }
}
