import Testing

@testable import DeallocAnalysis

/// Selection must give what sorting gives, at every rank asked, for the shapes that make
/// quickselect slow or wrong: sorted, reversed, all equal, few distinct values, organ pipes,
/// extremes.
@Suite struct RankSelectionTests {
  @Test func valuesAtRanksAreTheSortedSamplesAtThoseRanks() {
    var generator = SplitMix(seed: 17)
    for trial in 0..<400 {
      let count = 1 + Int(generator.next() % 3_000)
      let samples: [Int64] = (0..<count).map { index in
        switch trial % 7 {
        case 0: return Int64(index)
        case 1: return Int64(count - index)
        case 2: return 42
        case 3: return Int64(generator.next() % 3)
        case 4: return Int64(min(index, count - index))
        case 5: return generator.next() % 2 == 0 ? .max : 0
        default: return Int64(bitPattern: generator.next()) >> 1
        }
      }
      let sorted = samples.sorted()
      let ranks = (0..<1 + Int(generator.next() % 4)).map { _ in
        Int(generator.next() % UInt64(count))
      }
      #expect(
        RankSelection.values(at: ranks, in: samples) == ranks.map { sorted[$0] },
        "trial \(trial), \(count) samples, ranks \(ranks)")
    }
  }
}
