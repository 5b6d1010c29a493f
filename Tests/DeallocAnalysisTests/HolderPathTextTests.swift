import DeallocAnalysis
import DeallocLog
import Testing

/// The text of a holder path and its grouping key, case by case.
@Suite struct HolderPathTextTests {
  let target = Address(0x7f75_aa00_1c10)

  func report(_ paths: [HolderPath], direct: Int? = nil, more: Int = 0) -> HolderReport {
    HolderReport(direct: direct ?? paths.count + more, more: more, paths: paths)
  }

  @Test func noHolderSaysWhatCannotBeSeen() {
    let empty = report([], direct: 0)
    #expect(
      HolderPathText.lines(empty, type: "T.A", address: target) == [
        "held by: no reference found in the scanned memory (a register, or the scanning"
          + " thread's own stack, may hold it)"
      ])
    #expect(empty.groupingKey == "no path")
    let depth = report([HolderPath(root: HolderRoot(kind: .none), steps: [])])
    #expect(depth.groupingKey == "none")
    #expect(
      HolderPathText.lines(depth, type: "T.A", address: target) == [
        "held by (no root found):", "  unrooted: no root within the scan's depth limit",
        "  → T.A 0x7f75…c10",
      ])
  }

  @Test func aSelfCapturingClosureIsACycleOfOneStep() {
    let cycle = report([
      HolderPath(
        root: HolderRoot(kind: .cycle),
        steps: [HolderStep(type: "Shop.VM", address: target, offset: 16, edge: .field("onChange"))]
      )
    ])
    #expect(
      HolderPathText.lines(cycle, type: "Shop.VM", address: target) == [
        "retain cycle: Shop.VM.onChange → Shop.VM"
      ])
    #expect(cycle.groupingKey == "cycle → Shop.VM.onChange")
  }

  /// Words the strong count ruled out are one line after the path, whatever its form, and
  /// change neither the heading nor the grouping key.
  @Test func staleWordsLeftOutAreCountedInOneLine() {
    var global = report([
      HolderPath(root: HolderRoot(kind: .global, symbol: "Shop.Cache.shared"), steps: [])
    ])
    let key = global.groupingKey
    global.surplus = 2
    #expect(
      HolderPathText.lines(global, type: "Shop.VM", address: target) == [
        "held by (shortest path from a root):", "  global Shop.Cache.shared",
        "  → Shop.VM 0x7f75…c10",
        "  (2 more words pointed at it and were left out: its strong count is made up without"
          + " them)",
      ])
    #expect(global.groupingKey == key)
    var none = report([], direct: 0)
    none.surplus = 1
    #expect(
      HolderPathText.lines(none, type: "Shop.VM", address: target).last
        == "  (1 more word pointed at it and was left out: its strong count is made up without it)")
  }

  @Test func unnamedWordsAndUnsymbolizedGlobalsSayWhatIsKnown() {
    let path = HolderPath(
      root: HolderRoot(kind: .global, module: "/usr/lib/libx.so", offset: 0x2f10),
      steps: [HolderStep(type: "X.Store", address: Address(0x20), offset: 40, edge: .unnamed)])
    #expect(
      HolderPathText.lines(report([path]), type: "T.A", address: nil) == [
        "held by (shortest path from a root):",
        "  global in libx.so+0x2f10 (no symbol)",
        "  → X.Store +40 (an unnamed word; it may not own what it points at)",
        "  → T.A",
      ])
    // No offset or module path in the key: the same leak keys alike on every machine.
    #expect(report([path]).groupingKey == "global ? → X.Store")
  }

  @Test func omittedStepsAreSaidBeforeTheLastStep() {
    let steps = [
      HolderStep(type: "A", edge: .field("a")), HolderStep(type: "Z", edge: .field("z")),
    ]
    let path = HolderPath(root: HolderRoot(kind: .stack), steps: steps, omittedSteps: 5)
    #expect(
      HolderPathText.lines(report([path]), type: "T", address: nil) == [
        "held by (shortest path from a root):",
        "  a thread's stack (a stack slot may be stale)",
        "  → A.a", "  → … 5 more", "  → Z.z", "  → T",
      ])
    #expect(report([path]).groupingKey == "stack → A.a → Z.z → …")
  }

  @Test func severalHoldersAreNumberedAndTheRestCounted() {
    let lines = HolderPathText.lines(
      report(
        [
          HolderPath(root: HolderRoot(kind: .stack, tid: 7), steps: []),
          HolderPath(
            root: HolderRoot(kind: .cycle),
            steps: [
              HolderStep(type: "T", edge: .field("f")),
              HolderStep(type: "closure context", edge: .captures([])),
            ]),
        ], more: 3), type: "T", address: nil)
    #expect(
      lines == [
        "held by 5 direct holders:",
        "  1. thread 7 stack (a stack slot may be stale)",
        "     → T",
        "  2. retain cycle: T.f → closure context (captures nothing) → T",
        "  … and 3 more",
      ])
  }
}
