import DeallocLog

/// The objects of a session still in a queue, by id and by address, in log order.
///
/// Contract: a dictionary from id to object that also answers ``latestID(at:)`` (after
/// ``indexAddresses()``) and lists its objects in insertion order (``object(at:)``). An
/// unreleased object is the one thing the analyzer keeps per object, so records are plain
/// data (48 bytes, no strings, no optionals) in chunks that never move; the latest ids'
/// positions sit in a direct-mapped window (``RecentIDWindow``) in front of a dictionary
/// that takes only the ids the window lets go (objects that stay in their queues).
///
/// The trade-off: a released object leaves a hole in the records until the next compaction,
/// which runs once holes outnumber objects (amortized O(1) per release).
struct LiveObjects {
  /// One object, as stored.
  private struct Record {
    var id: UInt64
    var enqueuedAt: Int64
    var address: UInt64
    var line: Int
    /// Index into the analyzer's type rows; -1 once released (a hole).
    var type: Int32
    var queue: Int32
    /// The enqueue's ``StackSlot``.
    var stack: Int32
  }

  /// Records per chunk: 3 MiB, a power of two.
  static var chunkSize: Int { 1 << 16 }
  private static var chunkShift: Int { 16 }

  /// Where the records lie: position `p` is at `chunks[p >> chunkShift] + (p & (chunkSize -
  /// 1))`. A plain pointer to the store's table of chunks, which closures capture with no
  /// reference counting. Valid until the store adds or drops a chunk.
  private struct Chunks {
    let table: UnsafeMutablePointer<UnsafeMutablePointer<Record>>

    @inline(__always)
    func pointer(_ position: Int) -> UnsafeMutablePointer<Record> {
      table[position >> LiveObjects.chunkShift] + (position & (LiveObjects.chunkSize - 1))
    }
  }

  /// The records, in raw chunks: reaching one is a shift, a mask and two loads, with no
  /// reference counting. Shared between copies of `LiveObjects` until one of them changes
  /// (copy on write, checked once per change).
  private final class Store {
    /// Unchecked: a store changes only through the one `LiveObjects` that holds it
    /// uniquely.
    @exclusivity(unchecked) private(set) var chunks: Chunks
    @exclusivity(unchecked) private var chunkCount = 0
    @exclusivity(unchecked) private var tableCapacity = 4
    @exclusivity(unchecked) private(set) var count = 0

    init() {
      chunks = Chunks(table: .allocate(capacity: tableCapacity))
    }

    deinit {
      // `Record` is plain data: nothing to deinitialize.
      for chunk in 0..<chunkCount { chunks.table[chunk].deallocate() }
      chunks.table.deallocate()
    }

    @inline(__always)
    func pointer(_ position: Int) -> UnsafeMutablePointer<Record> {
      assert(position < count)
      return chunks.pointer(position)
    }

    func append(_ record: Record) {
      if count & (LiveObjects.chunkSize - 1) == 0 { addChunk() }
      count += 1
      pointer(count - 1).initialize(to: record)
    }

    private func addChunk() {
      if chunkCount == tableCapacity {
        let table = UnsafeMutablePointer<UnsafeMutablePointer<Record>>.allocate(
          capacity: tableCapacity * 2)
        table.moveInitialize(from: chunks.table, count: chunkCount)
        chunks.table.deallocate()
        chunks = Chunks(table: table)
        tableCapacity *= 2
      }
      (chunks.table + chunkCount).initialize(to: .allocate(capacity: LiveObjects.chunkSize))
      chunkCount += 1
    }

    /// Keeps the first `kept` records and frees the chunks past them.
    func truncate(to kept: Int) {
      count = kept
      let needed = (kept + LiveObjects.chunkSize - 1) >> LiveObjects.chunkShift
      while chunkCount > needed {
        chunkCount -= 1
        chunks.table[chunkCount].deallocate()
      }
    }

    func copy() -> Store {
      let copy = Store()
      for position in 0..<count { copy.append(pointer(position).pointee) }
      return copy
    }
  }

  private var store = Store()
  private var holes = 0
  /// The latest ids' positions; older ids still here are in `byID`.
  private var recent: RecentIDWindow
  /// Positions of the ids the window let go.
  private var byID: [UInt64: Int] = [:]
  /// Position of the latest enqueue of each address (``indexAddresses()``).
  private var byAddress: [UInt64: Int] = [:]
  /// Whether `byAddress` is kept (``indexAddresses()``).
  private var addressesIndexed = false

  /// Ids whose positions the window keeps at first (``RecentIDWindow``): 256 KiB of slots,
  /// enough for the ids a queue's delay spans in a busy run.
  static var recentIDs: Int { 1 << 16 }
  /// The most the window grows to when objects stay in their queues: 16 MiB of slots, a log's
  /// four million latest ids.
  static var maximumRecentIDs: Int { 1 << 22 }

  init(
    recentIDs: Int = LiveObjects.recentIDs, maximumRecentIDs: Int = LiveObjects.maximumRecentIDs
  ) {
    recent = RecentIDWindow(size: recentIDs, maximumSize: maximumRecentIDs)
  }

  /// Objects in a queue now.
  var count: Int { store.count - holes }
  var isEmpty: Bool { count == 0 }

  @inline(__always)
  private func record(_ position: Int) -> Record {
    store.pointer(position).pointee
  }

  /// The object `id`, while it is in a queue.
  subscript(id: UInt64) -> SessionState.Live? {
    guard let position = position(of: id) else { return nil }
    return live(record(position))
  }

  /// Whether object `id` is in a queue.
  func contains(_ id: UInt64) -> Bool {
    position(of: id) != nil
  }

  /// Where object `id` is stored: the window for the latest ids, the table for the others.
  @inline(__always)
  private func position(of id: UInt64) -> Int? {
    guard recent.covers(id) else { return byID[id] }
    guard let position = recent.position(of: id), record(position).id == id else { return nil }
    return position
  }

  /// The id of the latest enqueue of `address` still in a queue, when it was not followed by
  /// another object's enqueue at that address which has since been released. Call
  /// ``indexAddresses()`` first.
  ///
  /// The address index keeps an entry when its object is released (the entry then points at
  /// a hole, which reads as "none"), so that a release touches it not at all. The next
  /// enqueue at the address replaces the entry; a compaction drops the entries of the holes
  /// it removes.
  func latestID(at address: UInt64) -> UInt64? {
    precondition(addressesIndexed, "latestID(at:) before indexAddresses()")
    guard let position = byAddress[address] else { return nil }
    let stored = record(position)
    return stored.type >= 0 ? stored.id : nil
  }

  /// Keeps the address index from now on, built from the records in the store (holes
  /// included, so that a released object's address reads as "none" as it would have).
  ///
  /// Why on demand: only a check without an id looks an object up by its address, and the
  /// recorder gives every check of an enqueued object its id, so most logs never pay for the
  /// index at each enqueue. The trade-off: a record that a compaction dropped before the index
  /// was built no longer hides an older object at its address that is still in a queue
  /// (the same object enqueued twice and released out of order).
  mutating func indexAddresses() {
    guard !addressesIndexed else { return }
    addressesIndexed = true
    for position in 0..<store.count {
      byAddress[store.pointer(position).pointee.address] = position
    }
  }

  /// Unshares the store before a change.
  @inline(__always)
  private mutating func makeStoreUnique() {
    if !isKnownUniquelyReferenced(&store) { store = store.copy() }
  }

  /// Adds object `id` (not in a queue now: the caller checks) as the latest at its address.
  mutating func insert(_ id: UInt64, _ object: SessionState.Live) {
    let stored = Record(
      id: id, enqueuedAt: object.enqueuedAt, address: object.address.rawValue, line: object.line,
      type: object.type, queue: object.queue, stack: object.stack.rawValue)
    makeStoreUnique()
    let position = store.count
    store.append(stored)
    let chunks = store.chunks
    let inWindow = recent.insert(id, position: position) { evicted in
      byID[chunks.pointer(evicted).pointee.id] = evicted
    }
    if !inWindow { byID[id] = position }
    if addressesIndexed { byAddress[stored.address] = position }
  }

  /// Removes object `id`; its address forgets it when it was the address's latest.
  @discardableResult
  mutating func removeValue(forKey id: UInt64) -> SessionState.Live? {
    makeStoreUnique()
    let chunks = store.chunks
    let position: Int
    if recent.covers(id) {
      guard let stored = recent.position(of: id), chunks.pointer(stored).pointee.id == id else {
        return nil
      }
      recent.remove(id)
      position = stored
    } else {
      guard let stored = byID.removeValue(forKey: id) else { return nil }
      position = stored
    }
    let stored = chunks.pointer(position)
    let object = stored.pointee
    stored.pointee.type = -1
    holes += 1
    if holes > 4096 && holes > store.count / 2 { compact() }
    return live(object)
  }

  /// The objects in log order (enqueue order): call ``object(at:)`` with `0..<storageCount`,
  /// skipping `nil`.
  var storageCount: Int { store.count }

  /// The object at storage position `position`, or `nil` for a hole.
  func object(at position: Int) -> (id: UInt64, object: SessionState.Live)? {
    let stored = record(position)
    guard stored.type >= 0 else { return nil }
    return (stored.id, live(stored))
  }

  private func live(_ record: Record) -> SessionState.Live {
    SessionState.Live(
      enqueuedAt: record.enqueuedAt, address: Address(record.address), type: record.type,
      queue: record.queue, stack: StackSlot(rawValue: record.stack), line: record.line)
  }

  /// Drops the holes in place, keeping log order (a record only moves down), and renumbers
  /// the positions the window and the dictionaries hold; the address index's entries of
  /// holes go. The caller has unshared the store.
  private mutating func compact() {
    let store = self.store
    var renumbered = [UInt32](repeating: RecentIDWindow.dropped, count: store.count)
    var kept = 0
    for position in 0..<store.count {
      let stored = store.pointer(position).pointee
      guard stored.type >= 0 else { continue }
      store.pointer(kept).pointee = stored
      renumbered[position] = UInt32(kept)
      kept += 1
    }
    store.truncate(to: kept)
    holes = 0
    // Every id in `byID` is in a queue, so none of its positions is dropped.
    for index in byID.values.indices {
      assert(renumbered[byID.values[index]] != RecentIDWindow.dropped)
      byID.values[index] = Int(renumbered[byID.values[index]])
    }
    recent.renumber(renumbered)
    if addressesIndexed {
      byAddress = byAddress.compactMapValues { position in
        renumbered[position] == RecentIDWindow.dropped ? nil : Int(renumbered[position])
      }
    }
  }
}
