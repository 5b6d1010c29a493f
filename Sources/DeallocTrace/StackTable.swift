/// Interns backtraces: each distinct sequence of return addresses gets an id once.
///
/// Lives on the writer thread, so the recording thread hands over raw addresses and never
/// hashes or locks a shared table. The first use of a stack also tells the writer to emit
/// its `stack` record before the record that names it.
struct StackTable {
  private var ids: [[UInt]: Int] = [:]

  /// The id of `frames`, and whether it is new (its `stack` record is still to be written).
  mutating func intern(_ frames: ArraySlice<UInt>) -> (id: Int, isNew: Bool) {
    let key = Array(frames)
    if let id = ids[key] { return (id, false) }
    let id = ids.count + 1
    ids[key] = id
    return (id, true)
  }
}
