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

@Suite struct IntegerTableSpreadTests {
  /// Keys that differ mostly in their high half, as the finding origins' (stack, type) pairs
  /// do: multiplied alone, they piled into a few runs (16 probes a lookup here, 59 on a
  /// leak-heavy log's origins); folded first, a lookup reads a few slots.
  @Test func keysThatDifferInTheirHighHalfSpreadOverTheSlots() {
    var table = IntegerTable<Int32>()
    var keys: [UInt64] = []
    for stack in 0..<64 as Range<UInt64> {
      for type in [2, 10, 18] as [UInt64] { keys.append(stack << 32 | type) }
    }
    for (index, key) in keys.enumerated() { table[key] = Int32(index) }
    let probes = keys.map { table.probeCount(of: $0) }
    #expect(Double(probes.reduce(0, +)) / Double(keys.count) < 4)
    for (index, key) in keys.enumerated() { #expect(table[key] == Int32(index)) }
  }

  /// Ids (a zero high half) keep the multiplicative hash's spread: one slot each.
  @Test func consecutiveIdsTakeOneProbeEach() {
    var table = IntegerTable<Int>()
    for id in 1...10_000 as ClosedRange<UInt64> { table[id] = Int(id) }
    #expect((1...10_000 as ClosedRange<UInt64>).allSatisfy { table.probeCount(of: $0) <= 2 })
  }
}
