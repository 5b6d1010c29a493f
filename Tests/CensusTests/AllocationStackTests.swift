import Foundation
import TestSupport
import XCTest

/// Allocation stacks (DEALLOCTRACE_ALLOC_STACKS=1): each census group names where its root
/// was allocated, in CensusProbe children, debug and release.
final class AllocationStackTests: XCTestCase {
  private func census(
    _ build: CensusProbeRun.Build, _ scenarios: [String], environment: [String: String]
  ) throws -> CensusValue {
    let run = try CensusProbeRun.run(build, scenarios + ["json"], environment: environment)
    XCTAssertEqual(run.status, 0, run.standardError)
    let value = try CensusValue(printedBy: run)
    XCTAssertNil(value.error, "\(value.raw)")
    return value
  }

  /// The symbols of each group's allocation stack, innermost first (nil: no `allocStack`).
  private func allocationSymbols(_ value: CensusValue) -> [[String]?] {
    value.groups.map { group in
      (group["allocStack"] as? [[String: Any]])?.map { $0["sym"] as? String ?? "?" }
    }
  }

  private func allocationCounts(_ value: CensusValue) -> (recorded: Int, dropped: Int)? {
    guard let counts = value.raw["allocStacks"] as? [String: Any] else { return nil }
    return (counts["recorded"] as? Int ?? -1, counts["dropped"] as? Int ?? -1)
  }

  /// The leaked Order ↔ Payment cycle was made in `plainCycle()`: its stack says so.
  private func checkCycleNamesItsAllocatingFunction(_ build: CensusProbeRun.Build) throws {
    let value = try census(build, ["cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1"])
    XCTAssertEqual(value.shapes, ["cycle: CensusProbe.Order×1, CensusProbe.Payment×1"])
    let symbols = try XCTUnwrap(allocationSymbols(value).first ?? nil, "\(value.raw)")
    XCTAssertTrue(
      symbols.contains { $0.contains("CensusProbe.plainCycle()") }, "\(symbols)")
    let counts = try XCTUnwrap(allocationCounts(value), "\(value.raw)")
    XCTAssertGreaterThan(counts.recorded, 0)
    XCTAssertEqual(counts.dropped, 0)
  }

  func testCycleNamesItsAllocatingFunctionDebug() throws {
    try checkCycleNamesItsAllocatingFunction(.debug)
  }
  func testCycleNamesItsAllocatingFunctionRelease() throws {
    try checkCycleNamesItsAllocatingFunction(.release)
  }

  /// Off by default: no stack and no counters in the record.
  func testOffByDefault() throws {
    let value = try census(.debug, ["cycle"], environment: [:])
    XCTAssertEqual(value.shapes.count, 1)
    XCTAssertEqual(allocationSymbols(value), [nil])
    XCTAssertNil(value.raw["allocStacks"])
  }

  /// A side table too small for the live objects drops the rest and counts them; the
  /// census still runs and still finds every leak.
  func testAFullTableCountsItsDrops() throws {
    let value = try census(
      .debug, ["many-cycles"],
      environment: ["DEALLOCTRACE_ALLOC_STACKS": "1", "CHOLDERS_TEST_ALLOC_STACK_SLOTS": "8"])
    XCTAssertEqual(value.leaked, 10_000)
    let counts = try XCTUnwrap(allocationCounts(value), "\(value.raw)")
    XCTAssertGreaterThanOrEqual(counts.dropped, 10_000 - 7, "\(value.raw)")
  }

  /// 10,000 objects made at once and freed before the cycle: each freed object's entry
  /// left the table with it, so it holds about as many entries as there are live objects.
  func testAFreedObjectLeavesTheTable() throws {
    let value = try census(
      .debug, ["churn", "cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1"])
    let counts = try XCTUnwrap(value.raw["allocStacks"] as? [String: Any], "\(value.raw)")
    XCTAssertGreaterThan(counts["recorded"] as? Int ?? 0, 10_000)
    let live = try XCTUnwrap(value.raw["objects"] as? Int)
    XCTAssertLessThan(live, 1_000)
    XCTAssertLessThanOrEqual(counts["objects"] as? Int ?? .max, live + 100, "\(value.raw)")
    let symbols = try XCTUnwrap(allocationSymbols(value).first ?? nil, "\(value.raw)")
    XCTAssertTrue(symbols.contains { $0.contains("plainCycle()") }, "\(symbols)")
  }

  /// Without a log, the census's text on stderr shows the stack too.
  func testTheExitCensusTextShowsAllocatedAt() throws {
    let run = try CensusProbeRun.run(
      .debug, ["cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let text = run.standardError
    let allocated = try XCTUnwrap(text.range(of: "allocated at:\n"), text)
    let firstFrame = text[allocated.upperBound...].prefix { $0 != "\n" }
    XCTAssertFalse(firstFrame.contains("swift_allocObject"), text)
    XCTAssertTrue(text[allocated.upperBound...].contains("CensusProbe.plainCycle()"), text)
  }

  /// DEALLOCTRACE_ALLOC_STACKS=1000 records one allocation in 1,000 (a per-thread count): the
  /// churn's 10,000 objects and the probe's few others give about ten stacks, not thousands,
  /// and the record states the rate.
  func testSamplingRecordsOneAllocationInN() throws {
    let value = try census(
      .debug, ["churn", "cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1000"])
    let counts = try XCTUnwrap(value.raw["allocStacks"] as? [String: Any], "\(value.raw)")
    XCTAssertEqual(counts["sampleEvery"] as? Int, 1_000, "\(value.raw)")
    let recorded = try XCTUnwrap(counts["recorded"] as? Int, "\(value.raw)")
    XCTAssertTrue((9...30).contains(recorded), "recorded \(recorded): \(value.raw)")
  }

  /// A root sampling passed over says "allocation not sampled" and the rate, in the census's
  /// text; so rare a rate that nothing in the probe is sampled makes it certain.
  func testAnUnsampledRootSaysSo() throws {
    let run = try CensusProbeRun.run(
      .debug, ["cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1000000"])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(
      run.standardError.contains("allocation not sampled (sampled 1 in 1000000)"),
      run.standardError)
    XCTAssertFalse(run.standardError.contains("allocated at"), run.standardError)
  }

  /// A cycle made 40 frames down keeps 32 of them (the depth), so that the
  /// program's frames above a deep framework call are still there.
  func testADeepAllocationKeepsThirtyTwoFrames() throws {
    let value = try census(
      .debug, ["deep-cycle"], environment: ["DEALLOCTRACE_ALLOC_STACKS": "1"])
    let symbols = try XCTUnwrap(allocationSymbols(value).first ?? nil, "\(value.raw)")
    XCTAssertEqual(symbols.count, 32, "\(symbols)")
    XCTAssertTrue(symbols.contains { $0.contains("CensusProbe.plainCycle()") }, "\(symbols)")
  }
}
