import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

@Suite struct StackSlotsTests {
  /// Ids on both sides of the dense limit, negative ones and word boundaries, checked
  /// against a `Dictionary` model for every id near each one named: one slot per id, dense
  /// in the order ids are first named, defined only by a `stack` record.
  @Test func behavesLikeADictionaryOfDenseSlots() {
    var stacks = StackSlots()
    var model: [Int64: (slot: Int32, frames: [Frame]?)] = [:]
    let limit = StackSlots.denseLimit
    let named: [Int64] = [
      1, 2, 63, 64, 65, 127, 128, 4095, limit - 1, limit, limit + 1, -1, .min, .max, 700_000,
    ]
    for (step, id) in named.enumerated() {
      let frames = [Frame(ip: UInt64(step))]
      if step % 3 == 0 {
        _ = stacks.slot(naming: id)
        if model[id] == nil { model[id] = (Int32(model.count), nil) }
      } else {
        stacks.define(id, frames: frames)
        model[id] = (model[id]?.slot ?? Int32(model.count), frames)
      }
      for probe in [id &- 2, id &- 1, id, id &+ 1, id &+ 2, 0, 3, 1 << 19] {
        guard let expected = model[probe] else { continue }
        let (slot, isDefined) = stacks.slot(naming: probe)
        #expect(slot == StackSlot(rawValue: expected.slot), "id \(probe)")
        #expect(isDefined == (expected.frames != nil), "id \(probe)")
        #expect(stacks.frames(of: slot) == expected.frames, "id \(probe)")
      }
    }
    #expect(stacks.count == model.count)
    let (noStack, isDefined) = stacks.slot(naming: nil)
    #expect(noStack == .noStack && isDefined)
    #expect(stacks.frames(of: .noStack) == nil)
  }

  /// A stack's symbolized frames are kept by slot, and a later record with the same id
  /// replaces its frames but not them.
  @Test func symbolizedFramesAreKeptPerSlot() {
    var stacks = StackSlots()
    stacks.define(5, frames: [Frame(ip: 1)])
    let (slot, _) = stacks.slot(naming: 5)
    #expect(stacks.symbolizedFrames(of: slot) == nil)
    stacks.keepSymbolized([Frame(ip: 1, symbol: "f")], of: slot)
    stacks.define(5, frames: [Frame(ip: 2)])
    #expect(stacks.frames(of: slot) == [Frame(ip: 2)])
    #expect(stacks.symbolizedFrames(of: slot) == [Frame(ip: 1, symbol: "f")])
    #expect(stacks.symbolizedFrames(of: .noStack) == nil)
  }
}
