/// Which ids a table may hold, as a bit per id modulo 2¹⁶ (8 KiB): set when an id is added,
/// never cleared one by one (ids 65,536 apart share a bit), so its "no" is certain and its
/// "maybe" sends the caller to the table.
///
/// Why: every release asks the check ledger whether it follows the released object, and on
/// a leak-heavy log the ledger's tables hold thousands of objects, so each probe missed the
/// cache (3 % of the analyzer's time, for an answer that is nearly always "no"); the bits
/// stay in cache. Recorder ids are consecutive, so they spread over the bits evenly. Bits of
/// ids since removed only cost a probe; ``rebuild(from:)`` drops them once the ids added
/// since the last rebuild outnumber those held by more than ``staleAllowance``.
struct IDPrefilter {
  private static let wordCount = 1 << 10
  /// Ids added beyond those held before a rebuild pays: a rebuild reads every held id.
  static let staleAllowance = 4096
  private var words = [UInt64](repeating: 0, count: IDPrefilter.wordCount)
  private var addedSinceRebuild = 0

  @inline(__always)
  private static func bit(_ id: UInt64) -> (word: Int, mask: UInt64) {
    (Int(truncatingIfNeeded: id >> 6) & (wordCount - 1), 1 << (id & 63))
  }

  mutating func add(_ id: UInt64) {
    let (word, mask) = Self.bit(id)
    words[word] |= mask
    addedSinceRebuild += 1
  }

  /// `false` when no id added since the last rebuild, nor any rebuilt from, is `id`.
  @inline(__always)
  func mayContain(_ id: UInt64) -> Bool {
    let (word, mask) = Self.bit(id)
    return words[word] & mask != 0
  }

  /// Whether the bits should be rebuilt from the `held` ids the tables hold now.
  func isStale(held: Int) -> Bool {
    addedSinceRebuild > held + Self.staleAllowance
  }

  /// Clears the bits and sets those of `ids` (the ids the tables hold).
  mutating func rebuild<IDs: Sequence<UInt64>>(from ids: IDs) {
    for index in words.indices { words[index] = 0 }
    addedSinceRebuild = 0
    for id in ids {
      let (word, mask) = Self.bit(id)
      words[word] |= mask
    }
  }
}
