import Testing

@testable import DeallocAnalysis

@Suite struct StackIDTableTests {
  /// Ids on both sides of the dense limit, negative ones and word boundaries, checked
  /// against `Dictionary` for every id near each inserted one.
  @Test func behavesLikeADictionary() {
    var ids = StackIDTable<Int64>()
    var reference: [Int64: Int64] = [:]
    let limit = StackIDTable<Int64>.denseLimit
    let inserted: [Int64] = [
      1, 2, 63, 64, 65, 127, 128, 4095, limit - 1, limit, limit + 1, -1, .min, .max, 700_000,
    ]
    for id in inserted {
      ids[id] = id &* 3
      reference[id] = id &* 3
      for probe in [id &- 2, id &- 1, id, id &+ 1, id &+ 2, 0, 3, 1 << 19] {
        #expect(ids[probe] == reference[probe], "id \(probe)")
        #expect(ids.contains(probe) == (reference[probe] != nil), "id \(probe)")
      }
    }
    #expect(ids[0] == nil)
    #expect(ids[limit] == limit &* 3)
  }
}
