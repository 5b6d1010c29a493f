import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The compact store of objects in a queue, checked against a plain model: ids, the latest
/// enqueue per address, log order, through compactions and table growth.
@Suite struct LiveObjectsTests {
  private func live(_ id: UInt64, address: UInt64, stack: Int32?, line: Int)
    -> SessionState.Live
  {
    SessionState.Live(
      enqueuedAt: Int64(line) * 10, address: Address(address), type: Int32(id % 7),
      queue: Int32(id % 3), stack: stack.map { StackSlot(rawValue: $0) } ?? .noStack, line: line)
  }

  /// With the default window of recent ids, with a window of 16 ids, which most ids leave
  /// while their object is still stored (the table's path), and with a window that grows
  /// from 16 as they do.
  @Test(arguments: [
    (LiveObjects.recentIDs, LiveObjects.maximumRecentIDs), (16, 16), (16, 1 << 12),
  ])
  func behavesLikeTheModel(recentIDs: Int, maximumRecentIDs: Int) {
    var objects = LiveObjects(recentIDs: recentIDs, maximumRecentIDs: maximumRecentIDs)
    objects.indexAddresses()
    var model: [UInt64: SessionState.Live] = [:]
    var latest: [UInt64: UInt64] = [:]
    var generator = SplitMix(seed: 11)
    var nextID: UInt64 = 1
    for step in 0..<150_000 {
      if generator.next() % 3 != 0 || model.isEmpty {
        // Ids mostly in order, sometimes far away (a second recorder, a huge id).
        let id = step % 50 == 0 ? generator.next() | 1 << 40 : nextID
        nextID += 1
        guard model[id] == nil else { continue }
        let address = 0x7000_0000 + (generator.next() % 2000) * 16
        let stack: Int32? = step % 5 == 0 ? nil : Int32(generator.next() % 40)
        let object = live(id, address: address, stack: stack, line: step)
        objects.insert(id, object)
        model[id] = object
        latest[address] = id
      } else {
        // Remove the oldest or a random one.
        let id = step % 2 == 0 ? model.keys.min()! : model.keys.randomElement(using: &generator)!
        let removed = objects.removeValue(forKey: id)
        #expect(removed?.line == model[id]?.line)
        #expect(removed?.stack == model[id]?.stack)
        let address = model[id]!.address.rawValue
        model[id] = nil
        if latest[address] == id { latest[address] = nil }
      }
      if step % 4999 == 0 {
        #expect(objects.count == model.count)
        for (id, object) in model {
          #expect(objects[id]?.enqueuedAt == object.enqueuedAt)
          #expect(objects.contains(id))
        }
        for (address, id) in latest { #expect(objects.latestID(at: address) == id) }
        var inOrder: [Int] = []
        for position in 0..<objects.storageCount {
          if let (_, object) = objects.object(at: position) { inOrder.append(object.line) }
        }
        #expect(inOrder == inOrder.sorted())
        #expect(inOrder.count == model.count)
      }
    }
    #expect(objects.removeValue(forKey: 0) == nil)
  }

  /// A copy is a value: changing either (inserts, removals, a compaction) leaves the other
  /// as it was, although the records' memory is shared until the first change.
  @Test func copiesAreIndependent() {
    var original = LiveObjects()
    original.indexAddresses()
    for id in UInt64(1)...10_000 {
      original.insert(id, live(id, address: 0x1000 + id * 16, stack: Int32(id % 4), line: Int(id)))
    }
    var copy = original
    // Enough removals to compact the copy's records.
    for id in UInt64(1)...9_000 { copy.removeValue(forKey: id) }
    copy.insert(20_000, live(20_000, address: 0x1010, stack: nil, line: 20_000))
    #expect(original.count == 10_000)
    #expect(original[1]?.line == 1)
    #expect(original.latestID(at: 0x1010) == 1)
    #expect(copy.count == 1_001)
    #expect(copy[1] == nil)
    #expect(copy.latestID(at: 0x1010) == 20_000)
    original.removeValue(forKey: 10_000)
    #expect(copy[10_000]?.line == 10_000)
    #expect(original[10_000] == nil)
  }

  /// A released object's address answers "none" before and after the compaction that drops
  /// its record, an older object at that address does not become the latest again, and the
  /// next enqueue there is found.
  @Test func aReleasedAddressStaysForgottenThroughCompaction() {
    var objects = LiveObjects()
    objects.indexAddresses()
    objects.insert(1, live(1, address: 0xA0, stack: nil, line: 1))
    objects.insert(2, live(2, address: 0xA0, stack: nil, line: 2))
    objects.removeValue(forKey: 2)
    #expect(objects.latestID(at: 0xA0) == nil)
    // Enough enqueues and releases elsewhere to compact the holes away.
    for id in UInt64(10)..<20_010 {
      objects.insert(id, live(id, address: 0x10_0000 + id * 16, stack: nil, line: Int(id)))
      objects.removeValue(forKey: id)
    }
    #expect(objects.storageCount < 10_000, "compacted")
    #expect(objects.latestID(at: 0xA0) == nil)
    #expect(objects[1]?.line == 1)
    objects.insert(30_000, live(30_000, address: 0xA0, stack: nil, line: 30_000))
    #expect(objects.latestID(at: 0xA0) == 30_000)
    objects.removeValue(forKey: 1)
    #expect(objects.latestID(at: 0xA0) == 30_000)
  }

  /// An address index built after compactions (a first check without an id) finds the
  /// latest enqueue of each address among the records kept, reads a released one as "none",
  /// and is kept up to date from then on.
  @Test func anAddressIndexBuiltLateFindsTheObjectsKept() {
    var objects = LiveObjects()
    for id in UInt64(1)...20_000 {
      objects.insert(id, live(id, address: 0x10_0000 + id * 16, stack: nil, line: Int(id)))
      // Every object but each hundredth leaves; the last one at each address is kept.
      if id % 100 != 0 && id != 20_000 { objects.removeValue(forKey: id) }
    }
    #expect(objects.storageCount < 10_000, "compacted before the index exists")
    objects.insert(30_000, live(30_000, address: 0xB0, stack: nil, line: 30_000))
    objects.removeValue(forKey: 30_000)
    objects.indexAddresses()
    for id in UInt64(1)...20_000 {
      let expected: UInt64? = id % 100 == 0 || id == 20_000 ? id : nil
      #expect(objects.latestID(at: 0x10_0000 + id * 16) == expected)
    }
    #expect(objects.latestID(at: 0xB0) == nil, "its latest enqueue was released")
    objects.insert(30_001, live(30_001, address: 0xB0, stack: nil, line: 30_001))
    #expect(objects.latestID(at: 0xB0) == 30_001)
    objects.insert(30_002, live(30_002, address: 0x10_0000 + 100 * 16, stack: nil, line: 30_002))
    #expect(objects.latestID(at: 0x10_0000 + 100 * 16) == 30_002)
  }

  /// Objects whose ids leave the window while they are stored (stuck in a queue) are found,
  /// removed and compacted through the table; an id enqueued late, below the window, goes to
  /// the table; an id re-enqueued after its release is found again.
  @Test func idsThatLeaveTheWindowAreStillFound() {
    var objects = LiveObjects(recentIDs: 8, maximumRecentIDs: 8)
    // Every third object stays; the others leave soon after their enqueue.
    for id in UInt64(1)...15_000 {
      objects.insert(id, live(id, address: 0x1000 + id * 16, stack: nil, line: Int(id)))
      if id > 4, (id - 4) % 3 != 0 { objects.removeValue(forKey: id - 4) }
    }
    #expect(objects.storageCount < 15_000, "compacted")
    for id in UInt64(1)...14_996 {
      #expect(objects.contains(id) == (id % 3 == 0), "id \(id)")
    }
    // A late enqueue of an old id, far below the window.
    objects.insert(2, live(2, address: 0x9000, stack: nil, line: 5_000))
    #expect(objects[2]?.line == 5_000)
    #expect(objects.removeValue(forKey: 3)?.line == 3)
    #expect(objects[3] == nil)
    // A released id within the window, enqueued again.
    objects.removeValue(forKey: 14_999)
    #expect(objects[14_999] == nil)
    objects.insert(14_999, live(14_999, address: 0x9010, stack: nil, line: 6_000))
    #expect(objects[14_999]?.line == 6_000)
    // A jump past the whole window moves every object in it to the table.
    objects.insert(1 << 40, live(1, address: 0x9020, stack: nil, line: 7_000))
    #expect(objects[15_000]?.line == 15_000)
    #expect(objects[14_999]?.line == 6_000)
    #expect(objects[1 << 40]?.line == 7_000)
  }
}
