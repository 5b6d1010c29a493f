/// Interns backtraces: each distinct sequence of return addresses gets an id once.
///
/// Lives on the writer thread, so the recording thread hands over raw addresses and never
/// hashes or locks a shared table. The first use of a stack also tells the writer to emit
/// its `stack` record before the record that names it. Hot loops enqueue from the same
/// place over and over, so the previous stack is compared first, without hashing.
struct StackTable {
  private var ids: [Int: [(frames: [UInt], id: Int)]] = [:]
  private var count = 0
  private var previous: (frames: [UInt], id: Int) = ([], 0)

  /// The id of `frames`, and whether it is new (its `stack` record is still to be written).
  mutating func intern(_ frames: ArraySlice<UInt>) -> (id: Int, isNew: Bool) {
    if previous.id != 0 && previous.frames.elementsEqual(frames) {
      return (previous.id, false)
    }
    var hasher = Hasher()
    for address in frames { hasher.combine(address) }
    let hash = hasher.finalize()
    if let known = ids[hash]?.first(where: { $0.frames.elementsEqual(frames) }) {
      previous = known
      return (known.id, false)
    }
    count += 1
    let entry = (frames: Array(frames), id: count)
    ids[hash, default: []].append(entry)
    previous = entry
    return (count, true)
  }
}
