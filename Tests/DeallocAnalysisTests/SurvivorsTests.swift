import DeallocLog
import Testing

@testable import DeallocAnalysis

@Suite struct SurvivorsTests {
  private struct Held: SurvivingObject {
    var address: Address
    var enqueuedAt: Int64
    var releasedAt: Int64
    var line: Int
  }

  /// Survivors in the order of a key (the line of each release), after inserts and removals
  /// that move entries in the storage: every survivor once, each with its own id.
  @Test func positionsFollowTheKeyThroughRemovals() {
    var survivors = Survivors<Held>()
    var lines: [UInt64: Int] = [:]
    var generator = SplitMix(seed: 5)
    for id in UInt64(1)...2_000 {
      let line = Int(generator.next() % 1_000_000) * 2_000 + Int(id)  // distinct
      survivors.insert(
        id, Held(address: Address(id * 16), enqueuedAt: 0, releasedAt: 1, line: line))
      lines[id] = line
      if id % 3 == 0 {
        let gone = UInt64(generator.next() % id) + 1
        if survivors.remove(gone) != nil { lines[gone] = nil }
      }
    }
    let ordered = survivors.positions(inOrderOf: \.line).map { survivors.survivor(at: $0) }
    #expect(ordered.map(\.survivor.line) == lines.values.sorted())
    #expect(ordered.allSatisfy { lines[$0.id] == $0.survivor.line })
  }
}
