import Testing

@testable import DeallocAnalysis

/// The bits in front of the check ledger's tables: never a "no" for an id added, and ids
/// removed since stop answering "maybe" once a rebuild is due.
@Suite struct IDPrefilterTests {
  @Test func anAddedIdIsAlwaysAMaybe() {
    var filter = IDPrefilter()
    #expect(!filter.mayContain(7))
    for id in stride(from: UInt64(1), to: 1_000_000, by: 37) { filter.add(id) }
    for id in stride(from: UInt64(1), to: 1_000_000, by: 37) { #expect(filter.mayContain(id)) }
  }

  @Test func consecutiveIdsDoNotShareBits() {
    var filter = IDPrefilter()
    filter.add(100)
    #expect(!filter.mayContain(99))
    #expect(!filter.mayContain(101))
    #expect(filter.mayContain(100 + 65_536), "65,536 apart: the same bit")
  }

  @Test func aRebuildKeepsOnlyTheIdsHeld() {
    var filter = IDPrefilter()
    for id in UInt64(1)...10_000 { filter.add(id) }
    #expect(!filter.isStale(held: 10_000))
    #expect(filter.isStale(held: 10), "most of the ids added are gone")
    filter.rebuild(from: [5, 6])
    #expect(filter.mayContain(5) && filter.mayContain(6))
    #expect(!filter.mayContain(7))
    #expect(!filter.isStale(held: 2))
  }
}
