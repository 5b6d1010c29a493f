import Foundation
import TestSupport
import XCTest

/// How a census is asked for and where it goes: DEALLOCTRACE_LEAKS=1 at exit (stderr
/// without a log, a `census` record with one), `DeallocTrace.checkpoint`, and the queues'
/// objects counted as delayed.
final class CensusTriggerTests: XCTestCase {
  /// Without a log, the exit census prints the `leaks` text on stderr; the exit status is
  /// the program's.
  func testExitCensusPrintsLeaksTextOnStderr() throws {
    let run = try CensusProbeRun.run(.debug, ["cycle"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let lines = run.standardError.split(separator: "\n").map(String.init)
    XCTAssertEqual(
      lines.first, "Process \(run.pid): 2 leaks for 80 total leaked bytes. (census \"exit\")")
    let tree = lines.filter { $0.contains("-->") || $0.contains("ROOT") }.map {
      $0.replacing(/0x[0-9a-f]+/, with: "ADDR")
    }
    XCTAssertEqual(
      tree,
      [
        "    2 (80 bytes) ROOT CYCLE: <CensusProbe.Order ADDR> [40]",
        "       1 (40 bytes) payment --> <CensusProbe.Payment ADDR> [40]",
        "          order --> CYCLE BACK TO <CensusProbe.Order ADDR> [40]",
      ])
    XCTAssertTrue(
      lines.contains {
        $0.hasPrefix("    cycle: CensusProbe.Order.payment → CensusProbe.Payment.order → ")
      }, run.standardError)
  }

  /// A queued object is delayed, with its queue's label, never a leak; a checkpoint says so.
  func testQueuedObjectIsDelayedAtACheckpoint() throws {
    let directory = try ScratchDirectory("census-queued")
    defer { directory.remove() }
    let log = directory.file("log.jsonl")
    let run = try CensusProbeRun.run(
      .debug, ["queued", "checkpoint", "after-queue"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    let censuses = try ParsedLog(path: log).kind("census")
    XCTAssertEqual(censuses.map { $0["label"] as? String }, ["after-queue", "exit"])
    for record in censuses {
      let value = CensusValue(record)
      XCTAssertEqual(value.shapes, [], "\(record)")
      XCTAssertEqual(value.delayedByQueue, ["slow-queue": 1], "\(record)")
      XCTAssertEqual(value.liveCount(of: "CensusProbe.Slow"), 1)
    }
  }

  /// Checkpoints of one label count the live objects of every type: a cache that only
  /// grows shows in each (what `check --max-growing-types` compares), and from the third
  /// on, one of its newest entries with the path that holds it.
  func testCheckpointsCountLiveObjectsPerType() throws {
    let directory = try ScratchDirectory("census-growth")
    defer { directory.remove() }
    let log = directory.file("log.jsonl")
    let run = try CensusProbeRun.run(.debug, ["growth"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    let censuses = try ParsedLog(path: log).kind("census").map(CensusValue.init)
    let iterations = censuses.filter { $0.raw["label"] as? String == "iteration" }
    XCTAssertEqual(iterations.map { $0.liveCount(of: "CensusProbe.CacheEntry") }, [10, 20, 30, 40])
    XCTAssertEqual(iterations.map(\.shapes), [[], [], [], []])
    // From the third census of the label, the cache's entry type rose at every one: the
    // record names one entry made since the previous census, and what holds it (the cache).
    let growing = iterations.map { census in
      (census.raw["growing"] as? [[String: Any]] ?? []).filter {
        $0["type"] as? String == "CensusProbe.CacheEntry"
      }
    }
    XCTAssertEqual(growing.map(\.count), [0, 0, 1, 1], "\(growing)")
    for entry in growing.joined() {
      XCTAssertEqual(entry["new"] as? Bool, true, "\(entry)")
      let holders = try XCTUnwrap(entry["holders"] as? [String: Any], "\(entry)")
      let path = try XCTUnwrap((holders["paths"] as? [[String: Any]])?.first, "\(holders)")
      let root = path["root"] as? [String: Any]
      XCTAssertEqual(root?["kind"] as? String, "global", "\(path)")
      XCTAssertTrue((root?["sym"] as? String ?? "").hasSuffix("growingCache"), "\(path)")
    }
    // Nothing else grows per checkpoint: the census's own queue lookup once kept two
    // closure contexts per call (a function value stored in the generic mutex).
    let live = iterations.map { census in
      (census.raw["live"] as? [[String: Any]] ?? []).filter {
        ($0["type"] as? String ?? "").hasPrefix("closure context")
      }.map { $0["count"] as? Int ?? -1 }
    }
    XCTAssertEqual(Set(live.map { $0.description }).count, 1, "\(live)")
  }

  /// The recorder's "is it queued" lookup, asked 1,000 times between checkpoints, leaves no
  /// closure context behind (it kept two per call when the function value sat in the
  /// generic mutex). The recorder's own census records, strings in the writer's batch until
  /// it runs, may grow by one per checkpoint; those are not this test's concern.
  func testThePendingLookupLeavesNothingBehind() throws {
    let directory = try ScratchDirectory("census-lookup")
    defer { directory.remove() }
    let log = directory.file("log.jsonl")
    let run = try CensusProbeRun.run(
      .debug, ["pending-lookup"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    let censuses = try ParsedLog(path: log).kind("census").map(CensusValue.init)
    let lookups = censuses.filter { $0.raw["label"] as? String == "lookup" }
    XCTAssertEqual(lookups.count, 4)
    let growing = lookups.flatMap { $0.raw["growing"] as? [[String: Any]] ?? [] }
    let contexts = growing.compactMap { $0["type"] as? String }.filter {
      $0.hasPrefix("closure context")
    }
    XCTAssertEqual(contexts, [], "\(growing)")
  }

  /// With a log, the exit census is a `census` record before `end`, which the contract's
  /// validator accepts, and nothing is printed on stderr.
  func testExitCensusIsARecordBeforeEnd() throws {
    let directory = try ScratchDirectory("census-log")
    defer { directory.remove() }
    let log = directory.file("log.jsonl")
    let run = try CensusProbeRun.run(
      .debug, ["queued", "cycle", "closure-self"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertFalse(run.standardError.contains("ROOT CYCLE"), run.standardError)
    let records = try ParsedLog(path: log).records
    let kinds = records.compactMap { $0["ev"] as? String }
    XCTAssertEqual(kinds.suffix(2), ["census", "end"])
    let value = CensusValue(try XCTUnwrap(records.first { $0["ev"] as? String == "census" }))
    XCTAssertEqual(
      value.shapes,
      ["cycle: CensusProbe.Order×1, CensusProbe.Payment×1", "cycle: CensusProbe.ViewModel×1"])
    XCTAssertNotNil(value.raw["census_us"] as? Int)
    if let verdict = ContractValidator.verdict(for: URL(fileURLWithPath: log)) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
  }

  /// Forks while censuses run on another thread leave working children: each child's own
  /// census runs (the fork waited for the parent's census to finish; without the fork
  /// handlers a child could inherit its lock taken, and hang).
  func testAForkDuringACensusLeavesAWorkingChild() throws {
    let run = try CensusProbeRun.run(.debug, ["fork-census"])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(
      run.standardOutput.contains("FORKS ok 20 hung 0 failed 0"),
      run.standardOutput + run.standardError)
  }

  /// When holders are refused, the census says why in one line and the program goes on.
  func testARefusedRegistryIsOneLineAtExit() throws {
    let run = try CensusProbeRun.run(
      .debug, ["cycle"], environment: ["CHOLDERS_TEST_NO_SYMTAB": "1"])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(
      run.standardError,
      "dealloctrace: the leak census could not run: holders off: cannot find "
        + "_swift_retain_adapter in libswiftCore's symbol table, so the Swift 6.3 "
        + "retain-adapter crash (swiftlang/swift#88924) cannot be fixed here\n")
  }

  /// A checkpoint in a process without the registry says in one line why it cannot run,
  /// and the program goes on.
  func testCheckpointWithoutTheRegistrySaysWhy() throws {
    let run = try CensusProbeRun.run(
      CensusProbeRun.debugURL, ["cycle", "checkpoint", "now"], environment: [:], leaks: false)
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(
      run.standardError,
      "dealloctrace: the leak census could not run: the live-object registry is not on "
        + "(set DEALLOCTRACE_LEAKS=1 before the process starts)\n")
  }
}
