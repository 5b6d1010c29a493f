import DeallocLog

/// The objects of a session still in a queue, by id and by address, in log order.
///
/// Why this layout: an unreleased object is the one thing the analyzer keeps per object, so a
/// log of a million never-released objects costs a million of these. Records sit in enqueue
/// order (which is line order), 48 bytes each with no strings and no optionals, in chunks of
/// ``chunkSize`` (so that growing never copies them, nor holds the old and the new array at
/// once, which was half again the memory at the moment it happened); the two indexes (by id, and the latest enqueue by address) are
/// ``PositionTable``s of 8-byte slots pointing into that array. That is about 80 bytes per
/// object at the tables' worst load, against about 200 with two tables of full values and the
/// array they were copied into to be sorted by line at the session's end; in log order, that
/// sort is gone too.
///
/// The trade-off: a released object leaves a hole in the array until the next compaction,
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
    /// Index into `stackIDs`; -1 when the enqueue had no stack.
    var stack: Int32
  }

  /// Records per chunk: 3 MiB, a power of two.
  static var chunkSize: Int { 1 << 16 }
  private static var chunkShift: Int { 16 }

  /// Position `p` is `chunks[p >> chunkShift][p & (chunkSize - 1)]`.
  private var chunks: [[Record]] = []
  private var storedCount = 0
  private var holes = 0
  private var byID = PositionTable(.sequential)
  private var byAddress = PositionTable(.scattered)
  /// The session's stack ids, interned so that a record holds 4 bytes for its stack.
  private var stackIDs: [Int64] = []
  private var stackIndex = IntegerTable<Int32>()

  /// Objects in a queue now.
  var count: Int { storedCount - holes }
  var isEmpty: Bool { count == 0 }

  @inline(__always)
  private func record(_ position: Int) -> Record {
    chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)]
  }

  /// The object `id`, while it is in a queue.
  subscript(id: UInt64) -> SessionState.Live? {
    guard let position = byID.find(id, { record($0).id }) else { return nil }
    return live(record(position))
  }

  /// Whether object `id` is in a queue.
  func contains(_ id: UInt64) -> Bool {
    byID.find(id) { record($0).id } != nil
  }

  /// The id of the latest enqueue of `address` still in a queue, when it was not followed by
  /// another object's enqueue at that address which has since been released.
  func latestID(at address: UInt64) -> UInt64? {
    byAddress.find(address) { record($0).address }.map { record($0).id }
  }

  /// Adds object `id` (not in a queue now: the caller checks) as the latest at its address.
  mutating func insert(_ id: UInt64, _ object: SessionState.Live) {
    let stored = Record(
      id: id, enqueuedAt: object.enqueuedAt, address: object.address.rawValue, line: object.line,
      type: object.type, queue: object.queue, stack: intern(object.stack))
    let position = storedCount
    if position & (Self.chunkSize - 1) == 0 {
      var chunk: [Record] = []
      chunk.reserveCapacity(Self.chunkSize)
      chunks.append(chunk)
    }
    chunks[chunks.count - 1].append(stored)
    storedCount += 1
    // The tables are moved out while they change, so that reading keys from `self` does
    // not overlap the change (an empty table holds no memory).
    var ids = byID
    byID = PositionTable(.sequential)
    ids.insert(position, key: id) { record($0).id }
    byID = ids
    var addresses = byAddress
    byAddress = PositionTable(.scattered)
    addresses.insert(position, key: stored.address, replacing: true) { record($0).address }
    byAddress = addresses
  }

  /// Removes object `id`; its address forgets it when it was the address's latest.
  @discardableResult
  mutating func removeValue(forKey id: UInt64) -> SessionState.Live? {
    var ids = byID
    byID = PositionTable(.sequential)
    let removed = ids.remove(key: id) { record($0).id }
    byID = ids
    guard let position = removed else { return nil }
    let object = record(position)
    var addresses = byAddress
    byAddress = PositionTable(.scattered)
    addresses.remove(key: object.address, ifAt: position) { record($0).address }
    byAddress = addresses
    chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)].type = -1
    holes += 1
    if holes > 4096 && holes > storedCount / 2 { compact() }
    return live(object)
  }

  /// The objects in log order (enqueue order): call ``object(at:)`` with `0..<storageCount`,
  /// skipping `nil`.
  var storageCount: Int { storedCount }

  /// The object at storage position `position`, or `nil` for a hole.
  func object(at position: Int) -> (id: UInt64, object: SessionState.Live)? {
    let stored = record(position)
    guard stored.type >= 0 else { return nil }
    return (stored.id, live(stored))
  }

  private func live(_ record: Record) -> SessionState.Live {
    SessionState.Live(
      enqueuedAt: record.enqueuedAt, address: Address(record.address), type: record.type,
      queue: record.queue, stack: record.stack < 0 ? nil : stackIDs[Int(record.stack)],
      line: record.line)
  }

  private mutating func intern(_ stack: Int64?) -> Int32 {
    guard let stack else { return -1 }
    let key = UInt64(bitPattern: stack)
    if let index = stackIndex[key] { return index }
    let index = Int32(truncatingIfNeeded: stackIDs.count)
    stackIDs.append(stack)
    stackIndex[key] = index
    return index
  }

  /// Drops the holes in place, keeping log order (a record only moves down); the tables keep
  /// their layout (keys are unchanged, so are their slots) and only their positions are
  /// renumbered.
  private mutating func compact() {
    var renumbered = [UInt32](repeating: 0, count: storedCount)
    var kept = 0
    for position in 0..<storedCount {
      let stored = record(position)
      guard stored.type >= 0 else { continue }
      chunks[kept >> Self.chunkShift][kept & (Self.chunkSize - 1)] = stored
      renumbered[position] = UInt32(kept)
      kept += 1
    }
    let neededChunks = (kept + Self.chunkSize - 1) >> Self.chunkShift
    chunks.removeLast(chunks.count - neededChunks)
    if let last = chunks.indices.last {
      chunks[last].removeLast(chunks[last].count - (kept - (last << Self.chunkShift)))
    }
    storedCount = kept
    holes = 0
    byID.renumber(renumbered)
    byAddress.renumber(renumbered)
  }
}
