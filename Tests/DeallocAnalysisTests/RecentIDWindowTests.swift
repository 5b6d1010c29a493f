import Testing

@testable import DeallocAnalysis

/// The window of the latest ids' positions: which ids it covers, and which positions it
/// hands over as the ids leave it.
@Suite struct RecentIDWindowTests {
  @Test func coversTheLatestIdsUpToTheHighest() {
    var window = RecentIDWindow(size: 4, maximumSize: 4)
    #expect(!window.covers(0), "nothing before the first id")
    window.advance(to: 10) { _ in Issue.record("nothing to evict") }
    #expect(window.highest == 10)
    #expect(!window.covers(6))
    #expect(window.covers(7))
    #expect(window.covers(10))
    #expect(!window.covers(11), "above the highest: advance first")
  }

  @Test func advancingEvictsExactlyTheIdsThatLeave() {
    var window = RecentIDWindow(size: 4, maximumSize: 4)
    window.advance(to: 1) { _ in }
    for id in UInt64(1)...4 {
      if id > 1 { window.advance(to: id) { _ in Issue.record("the window is not full yet") } }
      window.set(id, position: Int(id) * 100)
    }
    window.remove(2)
    var evicted: [Int] = []
    // Ids 1 and 2 leave; 2 was removed, so only 1's position is handed over.
    window.advance(to: 6) { evicted.append($0) }
    #expect(evicted == [100])
    #expect(window.position(of: 3) == 300)
    #expect(window.position(of: 4) == 400)
    #expect(window.position(of: 5) == nil, "never set")
    window.set(6, position: 600)
    // A jump of more than the window's size evicts every position left, once each.
    evicted = []
    window.advance(to: 1_000) { evicted.append($0) }
    #expect(evicted.sorted() == [300, 400, 600])
    #expect(window.position(of: 1_000) == nil)
  }

  @Test func renumberingMovesAndDropsPositions() {
    var window = RecentIDWindow(size: 4, maximumSize: 4)
    window.advance(to: 3) { _ in }
    window.set(1, position: 0)
    window.set(2, position: 1)
    window.set(3, position: 2)
    window.renumber([RecentIDWindow.dropped, 0, 1])
    #expect(window.position(of: 1) == nil)
    #expect(window.position(of: 2) == 0)
    #expect(window.position(of: 3) == 1)
  }

  /// A window that objects keep leaving while stored doubles, keeps every position at its
  /// id, and never covers an id the table received, although its range now spans it.
  @Test func growsWhenObjectsKeepLeavingIt() {
    var window = RecentIDWindow(size: 4, maximumSize: 16)
    var evicted: [Int] = []
    for id in UInt64(1)...6 {
      window.advance(to: id) { evicted.append($0) }
      window.set(id, position: Int(id))
    }
    // Id 1 left while stored: a quarter of four slots, so the window doubled to 8, and id 2
    // stayed in it.
    #expect(evicted == [1])
    #expect(window.size == 8)
    #expect(!window.covers(1), "the table holds it")
    for id in UInt64(2)...6 {
      #expect(window.covers(id))
      #expect(window.position(of: id) == Int(id))
    }
    window.tableReceived(4)
    #expect(!window.covers(3) && !window.covers(4), "at or below an id the table received")
    #expect(window.covers(5))
    // It stops at its maximum.
    for id in UInt64(7)...200 {
      window.advance(to: id) { _ in }
      window.set(id, position: Int(id))
    }
    #expect(window.size == 16)
    #expect(window.position(of: 200) == 200)
  }

  /// The trade-off the type documents: objects that leave the window sparsely (one stuck
  /// object every 40 ids) make it grow, but never past 16 slots per object that left it.
  @Test func growsAtMostSixteenSlotsPerObjectThatLeftIt() {
    var window = RecentIDWindow(size: 16, maximumSize: 1 << 22)
    var evicted = 0
    var largest = window.size
    var overBound: UInt64?
    for id in UInt64(1)...400_000 {
      window.advance(to: id) { _ in evicted += 1 }
      window.set(id, position: Int(id))
      // Every object but each fortieth leaves its queue before its id leaves the window.
      if id > 8, (id - 8) % 40 != 0 { window.remove(id - 8) }
      largest = max(largest, window.size)
      if overBound == nil, window.size > max(16, 16 * evicted) { overBound = id }
    }
    #expect(overBound == nil, "more than 16 slots per object that left, at id \(overBound ?? 0)")
    #expect(evicted > 0 && largest > 16, "it grew")
  }
}
