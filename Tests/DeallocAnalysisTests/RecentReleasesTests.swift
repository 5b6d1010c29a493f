import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The look-back table of recent releases: bounded by count and by log time, found by id and
/// by address, and never mixing two objects up.
@Suite struct RecentReleasesTests {
  typealias Table = RecentReleases<Int>

  private func entry(_ address: UInt64, released t: Int64, value: Int) -> Table.Entry {
    Table.Entry(address: Address(address), enqueuedAt: t - 10, releasedAt: t, value: value)
  }

  @Test func keepsTheLatestReleasesUpToItsCapacity() {
    var table = Table(capacity: 64, window: .max)
    for id in 1...1000 {
      table.add(UInt64(id), entry(UInt64(id) * 16, released: Int64(id), value: id), now: Int64(id))
      #expect(table.count == min(id, 64))
    }
    #expect(table[936] == nil)
    #expect(table[937]?.value == 937)
    #expect(table[1000]?.value == 1000)
    #expect(table.latest(at: Address(1000 * 16))?.id == 1000)
    #expect(table.latest(at: Address(900 * 16)) == nil)
  }

  @Test func forgetsReleasesOlderThanItsWindow() {
    var table = Table(capacity: 4096, window: 100)
    table.add(1, entry(0x10, released: 0, value: 1), now: 0)
    table.add(2, entry(0x20, released: 50, value: 2), now: 50)
    #expect(table[1]?.value == 1)
    table.add(3, entry(0x30, released: 120, value: 3), now: 120)
    #expect(table[1] == nil, "released 120 ns before the latest record, beyond the window")
    #expect(table[2]?.value == 2)
    #expect(table.count == 2)
  }

  @Test func theLatestReleaseOfAnAddressWins() {
    var table = Table()
    table.add(1, entry(0xa0, released: 10, value: 1), now: 10)
    table.add(2, entry(0xa0, released: 20, value: 2), now: 20)
    #expect(table.latest(at: Address(0xa0))?.id == 2)
    #expect(table[1]?.value == 1, "still found by its id")
  }

  @Test func idsThatShareAnIndexCellAreNeverMixedUp() {
    // With 16 entries the index has 32 cells: ids 5 and 37 share one.
    var table = Table(capacity: 16, window: .max)
    table.add(5, entry(0x50, released: 1, value: 5), now: 1)
    table.add(37, entry(0x370, released: 2, value: 37), now: 2)
    #expect(table[37]?.value == 37)
    #expect(table[5] == nil, "forgotten, not answered with object 37")
    #expect(table[69] == nil)
  }

  @Test func updatesReachTheKeptEntryAndSurviveGrowth() {
    var table = Table(capacity: 1024, window: .max)
    table.add(1, entry(0x10, released: 1, value: 1), now: 1)
    table[1]?.value = 42
    for id in 2...600 {
      table.add(UInt64(id), entry(UInt64(id) * 16, released: Int64(id), value: id), now: Int64(id))
    }
    #expect(table[1]?.value == 42)
    #expect(table.count == 600)
    table[9999]?.value = 1
    #expect(table[9999] == nil)
  }
}
