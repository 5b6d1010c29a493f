import Testing

@testable import DeallocAnalysis

@Suite struct IntegerTableTests {
  /// Random inserts, overwrites and removals, checked against `Dictionary` after every step.
  @Test func behavesLikeADictionary() {
    var table = IntegerTable<Int>()
    var reference: [UInt64: Int] = [:]
    var generator = SplitMix(seed: 7)
    for step in 0..<200_000 {
      // Few distinct keys, so that runs collide, wrap around and shift back often.
      let key = generator.next() % 3000 &* (step % 2 == 0 ? 1 : 0x1_0000_0000)
      switch generator.next() % 3 {
      case 0, 1:
        table[key] = step
        reference[key] = step
      default:
        #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
      }
      if step % 997 == 0 {
        #expect(table.count == reference.count)
        for (key, value) in reference { #expect(table[key] == value) }
      }
    }
    #expect(Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key, $0.value) }) == reference)
    // Storage positions: each entry once, and `map` in the same order.
    let stored = (0..<table.count).map { table.entry(at: $0) }
    #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.key, $0.value) }) == reference)
    #expect(table.map { $0 } == stored.map(\.value))
  }
}
