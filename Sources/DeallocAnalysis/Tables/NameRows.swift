import DeallocLog

/// Row indices by name (type names, queue labels), found by the name's ``NameID``.
///
/// Contract: ``row(_:id:)`` gives each distinct name a dense row, in order of first
/// appearance, whatever ids come with it. Why an array by id: the reader numbers every name
/// it interns, so a name seen before is one load and one compare, where a dictionary hashed
/// its characters for every record. The row found by id is confirmed against the row's name
/// (the same storage, so the compare is of two words), and a name without an id, or whose id
/// names another row (a record built by hand, a name past the interner's capacity, records
/// of another reader), goes to the dictionary: ids change the speed, never a row.
struct NameRows {
  private(set) var names: [String] = []
  private var byName: [String: Int32] = [:]
  /// Row by ``NameID/index``, -1 when unknown; as long as the largest id seen.
  private var byID: [Int32] = []
  /// Lookups that went to the dictionary, for tests.
  private(set) var dictionaryLookups = 0

  /// The row of `name`, whose id is `id`, and whether it was added by this call. Inlined (it
  /// runs twice per enqueue): a hit is a few instructions, and the miss goes out of line.
  @inline(__always)
  mutating func row(_ name: String, id: NameID) -> (row: Int, isNew: Bool) {
    if let index = id.index, index < byID.count {
      let row = Int(byID[index])
      if row >= 0 && names[row] == name { return (row, false) }
    }
    return rowAfterMiss(name, id: id)
  }

  @inline(never)
  private mutating func rowAfterMiss(_ name: String, id: NameID) -> (row: Int, isNew: Bool) {
    dictionaryLookups += 1
    let row: Int
    let isNew: Bool
    if let known = byName[name] {
      row = Int(known)
      isNew = false
      // The reader's string (it came with an id) from now on: then a hit compares storage.
      if id.index != nil { names[row] = name }
    } else {
      row = names.count
      names.append(name)
      byName[name] = Int32(row)
      isNew = true
    }
    if let index = id.index {
      if index >= byID.count {
        byID.append(contentsOf: repeatElement(-1, count: index + 1 - byID.count))
      }
      byID[index] = Int32(row)
    }
    return (row, isNew)
  }
}
