import Testing

@testable import DeallocAnalysis

@Suite struct StackIDSetTests {
  /// Ids on both sides of the dense limit, negative ones and word boundaries, checked
  /// against `Set` for every id near each inserted one.
  @Test func behavesLikeASet() {
    var ids = StackIDSet()
    var reference: Set<Int64> = []
    let limit = StackIDSet.denseLimit
    let inserted: [Int64] = [
      1, 2, 63, 64, 65, 127, 128, 4095, limit - 1, limit, limit + 1, -1, .min, .max, 700_000,
    ]
    for id in inserted {
      ids.insert(id)
      reference.insert(id)
      for probe in [id &- 2, id &- 1, id, id &+ 1, id &+ 2, 0, 3, 1 << 19] {
        #expect(ids.contains(probe) == reference.contains(probe), "id \(probe)")
      }
    }
    #expect(!ids.contains(0))
    #expect(ids.contains(limit))
  }
}
