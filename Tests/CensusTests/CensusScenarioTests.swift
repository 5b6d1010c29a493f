import Foundation
import TestSupport
import XCTest

/// The census of each CensusProbe scenario, run at once in the child (`json`), in debug and
/// release builds: the exact groups for leaks, no group for what is still reachable.
final class CensusScenarioTests: XCTestCase {
  private func census(
    _ build: CensusProbeRun.Build, _ scenario: String, environment: [String: String] = [:]
  ) throws -> CensusValue {
    let run = try CensusProbeRun.run(build, [scenario, "json"], environment: environment)
    XCTAssertEqual(run.status, 0, run.standardError)
    let value = try CensusValue(printedBy: run)
    XCTAssertNil(value.error, "\(value.raw)")
    return value
  }

  private func checkPlainCycle(_ build: CensusProbeRun.Build) throws {
    let value = try census(build, "cycle")
    XCTAssertEqual(value.shapes, ["cycle: CensusProbe.Order×1, CensusProbe.Payment×1"])
    XCTAssertEqual(value.cycles, ["CensusProbe.Order.payment → CensusProbe.Payment.order"])
    XCTAssertEqual(value.leaked, 2)
  }

  func testPlainCycleDebug() throws { try checkPlainCycle(.debug) }
  func testPlainCycleRelease() throws { try checkPlainCycle(.release) }

  private func checkClosureSelf(_ build: CensusProbeRun.Build) throws {
    let value = try census(build, "closure-self")
    // A closure that captures only self uses the object itself as its context.
    XCTAssertEqual(value.shapes, ["cycle: CensusProbe.ViewModel×1"])
    XCTAssertEqual(value.cycles, ["CensusProbe.ViewModel.onChange"])
  }

  func testClosureSelfDebug() throws { try checkClosureSelf(.debug) }
  func testClosureSelfRelease() throws { try checkClosureSelf(.release) }

  private func checkArrayCycle(_ build: CensusProbeRun.Build) throws {
    let value = try census(build, "array-cycle")
    XCTAssertEqual(
      value.shapes, ["cycle: CensusProbe.Link×3, Swift._ContiguousArrayStorage<Swift.AnyObject>×3"])
    let link = "CensusProbe.Link.items → Swift._ContiguousArrayStorage<Swift.AnyObject>[0]"
    XCTAssertEqual(value.cycles, [[link, link, link].joined(separator: " → ")])
  }

  func testArrayCycleDebug() throws { try checkArrayCycle(.debug) }

  /// A Link held 40,000 times by its own array, dropped, its address left in a global
  /// integer: its count (past 16 bits, kept apart from the rows' 16-bit counts) is all its
  /// own array's references, so the integer does not hold it and the cycle is a leak.
  func testACountPastSixteenBitsIsSubtractedWhole() throws {
    let value = try census(.debug, "self-referencing")
    XCTAssertEqual(
      value.shapes, ["cycle: CensusProbe.Link×1, Swift._ContiguousArrayStorage<Swift.AnyObject>×1"])
  }
  func testArrayCycleRelease() throws { try checkArrayCycle(.release) }

  private func checkOverRetained(_ build: CensusProbeRun.Build) throws {
    let value = try census(build, "over-retained")
    XCTAssertEqual(
      value.shapes,
      [
        "leak: CensusProbe.Child×3, CensusProbe.Parent×1, "
          + "Swift._ContiguousArrayStorage<Swift.AnyObject>×1"
      ])
    XCTAssertEqual(value.cycles, [""])
  }

  func testOverRetainedDebug() throws { try checkOverRetained(.debug) }
  func testOverRetainedRelease() throws { try checkOverRetained(.release) }

  /// A scenario whose object is alive and reachable only in the way the scenario tests:
  /// counted live, in no group.
  private func checkReachable(_ build: CensusProbeRun.Build, _ scenario: String, _ types: [String])
    throws
  {
    let value = try census(build, scenario)
    XCTAssertEqual(value.shapes, [], "\(value.raw)")
    for type in types {
      XCTAssertGreaterThan(value.liveCount(of: type), 0, "\(type) not live: \(value.raw)")
    }
  }

  func testUnmanagedInMallocDebug() throws {
    try checkReachable(.debug, "unmanaged-malloc", ["CensusProbe.Kept"])
  }
  func testUnmanagedInMallocRelease() throws {
    try checkReachable(.release, "unmanaged-malloc", ["CensusProbe.Kept"])
  }

  func testMultiPayloadEnumDebug() throws {
    try checkReachable(.debug, "enum", ["CensusProbe.Bar", "CensusProbe.Baz"])
  }
  func testMultiPayloadEnumRelease() throws {
    try checkReachable(.release, "enum", ["CensusProbe.Bar", "CensusProbe.Baz"])
  }

  func testBlockedThreadLocalDebug() throws {
    try checkReachable(.debug, "blocked-thread", ["CensusProbe.Local"])
  }
  func testBlockedThreadLocalRelease() throws {
    try checkReachable(.release, "blocked-thread", ["CensusProbe.Local"])
  }

  /// A blocked thread whose only reference is in a callee-saved register: seen through the
  /// signal that parks the thread (the kernel saves its registers on its stack).
  func testRegisterOfABlockedThreadDebug() throws {
    try checkReachable(.debug, "register-held", ["CensusProbe.Local"])
  }
  func testRegisterOfABlockedThreadRelease() throws {
    try checkReachable(.release, "register-held", ["CensusProbe.Local"])
  }

  /// The same without parking threads: the register is unseen and the Local reads as an
  /// over-retained leak, which is what the park is for.
  func testRegisterOfABlockedThreadIsUnseenWithoutThePark() throws {
    let value = try census(.debug, "register-held", environment: ["CHOLDERS_CENSUS_NO_STOP": "1"])
    XCTAssertEqual(value.shapes, ["leak: CensusProbe.Local×1"])
  }

  func testDispatchTimerClosureDebug() throws {
    try checkReachable(.debug, "timer", ["CensusProbe.Ticker"])
  }
  func testDispatchTimerClosureRelease() throws {
    try checkReachable(.release, "timer", ["CensusProbe.Ticker"])
  }

  /// A Dictionary's `_seed` (an Int derived from its storage's address) is no reference:
  /// read as one, every dictionary was a one-object ROOT CYCLE.
  func testDictionaryHeldByAGlobalDebug() throws {
    try checkReachable(.debug, "dictionary", ["Swift._DictionaryStorage<Swift.String, Swift.Int>"])
  }
  func testDictionaryHeldByAGlobalRelease() throws {
    try checkReachable(
      .release, "dictionary", ["Swift._DictionaryStorage<Swift.String, Swift.Int>"])
  }

  func testCleanProgramDebug() throws {
    let value = try census(.debug, "clean")
    XCTAssertEqual(value.shapes, [])
    XCTAssertEqual(value.leaked, 0)
  }
  func testCleanProgramRelease() throws {
    let value = try census(.release, "clean")
    XCTAssertEqual(value.shapes, [])
  }

  /// One array holding 225,000 nodes, each with its own array storage and most with a next
  /// node: more objects reached from one object than the mark's work list holds (a 16th of
  /// the rows, and 4k more), so most are marked past its end and swept up later. Every
  /// one is reachable, and so is everything each keeps.
  func testAnObjectReachingMoreThanTheMarkListHoldsKeepsThemAll() throws {
    let value = try census(.debug, "big")
    XCTAssertEqual(value.shapes, [])
    XCTAssertEqual(value.leaked, 0)
    XCTAssertGreaterThan(value.raw["objects"] as? Int ?? 0, 450_000)
  }

  /// Issue 27 item 9: a census adds at most 16 bytes per live object, everything it takes
  /// counted (its rows, marks, counts, edges, work list and groups; `extra_bytes`), on the
  /// `big` heap of over 450,000 objects (each array element an edge). Before the census
  /// read its rows from the registry's bitmaps, its 24-byte snapshot rows alone broke it.
  func testACensusAddsAtMostSixteenBytesPerLiveObject() throws {
    let run = try CensusProbeRun.run(.debug, ["big", "json"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let stats = try XCTUnwrap(
      run.standardOutput.split(separator: "\n").last { $0.hasPrefix("STATS ") },
      run.standardOutput)
    let words = stats.split(separator: " ")
    func value(_ name: String) -> Int? {
      words.firstIndex { $0 == name }.flatMap { Int(words[$0 + 1]) }
    }
    let objects = try XCTUnwrap(value("objects"), String(stats))
    let extra = try XCTUnwrap(value("extra_bytes"), String(stats))
    XCTAssertGreaterThan(objects, 450_000)
    XCTAssertLessThanOrEqual(Double(extra) / Double(objects), 16, String(stats))
  }

  /// 5,000 cycles of one shape are one finding ×5,000.
  func testManyCyclesOfOneShapeAreOneFindingDebug() throws {
    let value = try census(.debug, "many-cycles")
    XCTAssertEqual(value.shapes, ["cycle: CensusProbe.Order×1, CensusProbe.Payment×1"])
    XCTAssertEqual(value.groups.first?["instances"] as? Int, 5_000)
    XCTAssertEqual(value.groups.first?["count"] as? Int, 10_000)
    XCTAssertEqual(value.leaked, 10_000)
  }

  /// Cycles of one type entered at either end are one finding: the id hashes the cycle from
  /// its smallest rotation, not from the member at the lower address. Before, the 200 pairs
  /// split into two findings (Note.reply → Note.parent, and Note.parent → Note.reply).
  func testACycleOfOneTypeHasOneIdWhicheverMemberIsTheRootDebug() throws {
    let value = try census(.debug, "symmetric-cycles")
    XCTAssertEqual(value.shapes, ["cycle: CensusProbe.Note×2"], "\(value.raw)")
    XCTAssertEqual(value.groups.first?["instances"] as? Int, 200)
    // A private type's context is named without the address that moves with ASLR (the
    // queue's WeakQueue is in every census's live list): ids hash the names.
    XCTAssertFalse("\(value.raw)".contains("unknown context at $"), "\(value.raw)")
    XCTAssertTrue("\(value.raw)".contains("DeallocQueue.(unknown context).WeakQueue"))
  }

  /// 60 findings: the record writes 50 in full and sums the rest by type.
  func testFindingsPastTheCapAreSummedByTypeDebug() throws {
    let value = try census(.debug, "many-shapes")
    XCTAssertEqual(value.groups.count, 50)
    let more = try XCTUnwrap(value.raw["more"] as? [String: Any], "\(value.raw)")
    XCTAssertEqual(more["findings"] as? Int, 10)
    XCTAssertEqual(more["count"] as? Int, 10)
    XCTAssertEqual((more["types"] as? [Any])?.count, 10)
    XCTAssertEqual(value.leaked, 60)
  }

  /// Several leaks in one process: each its own group, the same shape twice one finding.
  func testSeveralLeaksDebug() throws {
    let run = try CensusProbeRun.run(.debug, ["cycle", "cycle", "over-retained", "json"])
    let value = try CensusValue(printedBy: run)
    XCTAssertEqual(
      value.shapes,
      [
        "leak: CensusProbe.Child×3, CensusProbe.Parent×1, "
          + "Swift._ContiguousArrayStorage<Swift.AnyObject>×1",
        "cycle: CensusProbe.Order×1, CensusProbe.Payment×1",
      ])
    XCTAssertEqual(value.groups.last?["instances"] as? Int, 2)
    XCTAssertEqual(value.leaked, 9)
  }
}
