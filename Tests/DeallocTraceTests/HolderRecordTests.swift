import Foundation
import TestSupport
import XCTest

/// The `holders` records (issue 10): each scenario of `TraceProbe holders NAME` runs as a
/// child process with `DEALLOCTRACE_HOLDERS=1`, in the debug build and in the release
/// build, and its records must name exactly the holder the scenario set up.
final class HolderRecordTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  // MARK: Scenarios, debug and release

  func testGlobalArrayCacheDebug() throws { try checkGlobalArrayCache(.debug) }
  func testGlobalArrayCacheRelease() throws { try checkGlobalArrayCache(.release) }
  func testClosureCapturingSelfOnlyDebug() throws { try checkClosureCapturingSelfOnly(.debug) }
  func testClosureCapturingSelfOnlyRelease() throws {
    try checkClosureCapturingSelfOnly(.release)
  }
  func testClosureContextDebug() throws { try checkClosureContext(.debug) }
  func testClosureContextRelease() throws { try checkClosureContext(.release) }
  func testGlobalPropertyChainDebug() throws { try checkGlobalPropertyChain(.debug) }
  func testGlobalPropertyChainRelease() throws { try checkGlobalPropertyChain(.release) }
  func testStaleCopyIsCountedNotAHolderDebug() throws { try checkStaleCopy(.debug) }
  func testStaleCopyIsCountedNotAHolderRelease() throws { try checkStaleCopy(.release) }
  func testOtherThreadsStackDebug() throws { try checkOtherThreadsStack(.debug) }
  func testOtherThreadsStackRelease() throws { try checkOtherThreadsStack(.release) }
  func testLateObjectDebug() throws { try checkLateObject(.debug) }
  func testLateObjectRelease() throws { try checkLateObject(.release) }
  func testFreedObjectDebug() throws { try checkFreedObject(.debug) }
  func testFreedObjectRelease() throws { try checkFreedObject(.release) }
  func testSamePathDebug() throws { try checkSamePath(.debug) }
  func testSamePathRelease() throws { try checkSamePath(.release) }
  func testCheckScansOnlyObjectsInNoQueueDebug() throws { try checkCheckScans(.debug) }
  func testCheckScansOnlyObjectsInNoQueueRelease() throws { try checkCheckScans(.release) }
  func testCapsCountTheSkippedScansDebug() throws { try checkCaps(.debug) }
  func testCapsCountTheSkippedScansRelease() throws { try checkCaps(.release) }
  func testRecordersOwnReferencesNeverHoldDebug() throws { try checkBusy(.debug) }
  func testRecordersOwnReferencesNeverHoldRelease() throws { try checkBusy(.release) }
  func testSurvivalDebug() throws { try checkSurvival(.debug) }
  func testSurvivalRelease() throws { try checkSurvival(.release) }

  /// Tracing with holders off writes no `holders` key anywhere.
  /// The two ways to turn holders on from code (issue 34, item 8): `enableHolders()` before
  /// `start(path:)` (whose doc promises that sessions started afterwards record holders),
  /// and `start(path:holders: true)`; no `DEALLOCTRACE_HOLDERS` in the environment.
  func testEnableHoldersThenStartRecordsHolders() throws { try checkHoldersFromCode("enable") }
  func testStartWithHoldersTrueRecordsHolders() throws { try checkHoldersFromCode("start") }

  private func checkHoldersFromCode(_ how: String) throws {
    let url = directory.appendingPathComponent("from-code-\(how).jsonl")
    let run = try ProbeRun.run(["holders-from-code", how, url.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    XCTAssertEqual(run.standardOutput, how == "enable" ? "enabled true\n" : "")
    let log = try ParsedLog(contentsOf: url)
    XCTAssertEqual(log.kind("session").first?["holders"] as? Bool, true)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["release", "end"])
    for record in holders {
      assertPaths(record, ["global TraceProbe.holderSession → TraceProbe.HolderSession.current"])
    }
  }

  func testHoldersOffWritesNoHoldersKey() throws {
    let log = directory.appendingPathComponent("off.jsonl")
    let run = try ProbeRun.run(
      ["holders", "global-array"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    let text = try String(contentsOf: log, encoding: .utf8)
    XCTAssertFalse(text.contains(#""holders""#), text)
    XCTAssertFalse(text.contains("holder_scans"), text)
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertTrue(parsed.records.allSatisfy { $0["holders"] == nil })
    XCTAssertEqual(parsed.kind("release").first?["freed"] as? Bool, false)
    XCTAssertEqual(parsed.records.last?["ev"] as? String, "end")
  }

  // MARK: The checks

  private func checkGlobalArrayCache(_ build: ProbeBuild) throws {
    let log = try holderLog("global-array", build)
    let id = try survivorID(in: log)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["release", "end"])
    for record in holders {
      XCTAssertEqual(record["id"] as? Int, id)
      XCTAssertEqual(record["type"] as? String, "TraceProbe.HeldThumb")
      assertPaths(
        record,
        [
          "global TraceProbe.HolderCache.shared → TraceProbe.HolderCache.keep"
            + " → \(arrayStorage)[0 of 1]"
        ])
    }
    try assertHoldersRightAfterRelease(log, id: id)
    try assertEndHoldersBeforeEnd(log)
    try assertEndCounts(log, scans: 2, skipped: 0)
  }

  private func checkClosureCapturingSelfOnly(_ build: ProbeBuild) throws {
    let log = try holderLog("closure-self", build)
    let id = try survivorID(in: log)
    for record in log.kind("holders") {
      XCTAssertEqual(record["id"] as? Int, id)
      assertPaths(record, ["cycle → TraceProbe.SelfCapturingModel.onChange"])
      // The cycle starts at the object itself.
      let path = try XCTUnwrap((record["paths"] as? [[String: Any]])?.first)
      let steps = try XCTUnwrap(path["steps"] as? [[String: Any]])
      XCTAssertEqual(steps.first?["obj"] as? String, record["obj"] as? String)
    }
    XCTAssertEqual(log.kind("holders").map(\.why), ["release", "end"])
  }

  private func checkClosureContext(_ build: ProbeBuild) throws {
    let log = try holderLog("closure-context", build)
    let id = try survivorID(in: log)
    for record in log.kind("holders") {
      XCTAssertEqual(record["id"] as? Int, id)
      assertPaths(
        record,
        [
          "cycle → TraceProbe.CapturingModel.onChange"
            + " → closure context(captures TraceProbe.CapturingModel, Swift.String)"
        ])
    }
    XCTAssertEqual(log.kind("holders").map(\.why), ["release", "end"])
  }

  private func checkGlobalPropertyChain(_ build: ProbeBuild) throws {
    let log = try holderLog("chain", build)
    let id = try survivorID(in: log)
    for record in log.kind("holders") {
      XCTAssertEqual(record["id"] as? Int, id)
      assertPaths(record, ["global TraceProbe.holderSession → TraceProbe.HolderSession.current"])
    }
    XCTAssertEqual(log.kind("holders").map(\.why), ["release", "end"])
  }

  /// The survivor's strong count is the global's reference and the recorder's own (after
  /// the release, and at the end): the malloc word is left out of both records and counted.
  private func checkStaleCopy(_ build: ProbeBuild) throws {
    let log = try holderLog("stale-copy", build)
    let id = try survivorID(in: log)
    for record in log.kind("holders") {
      XCTAssertEqual(record["id"] as? Int, id)
      assertPaths(record, ["global TraceProbe.staleKept"])
      XCTAssertEqual(record["surplus"] as? Int, 1, "\(record)")
    }
    XCTAssertEqual(log.kind("holders").map(\.why), ["release", "end"])
  }

  private func checkOtherThreadsStack(_ build: ProbeBuild) throws {
    let log = try holderLog("other-thread", build)
    let id = try survivorID(in: log)
    let enqueue = try XCTUnwrap(log.kind("enqueue").first { $0["id"] as? Int == id })
    let worker = try XCTUnwrap(enqueue["tid"] as? Int)
    XCTAssertNotEqual(worker, log.kind("session").first?["pid"] as? Int)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["release"])
    let record = try XCTUnwrap(holders.first)
    XCTAssertEqual(record["id"] as? Int, id)
    let paths = try XCTUnwrap(record["paths"] as? [[String: Any]])
    XCTAssertFalse(paths.isEmpty)
    // Every word that points at it is in the worker's stack (its live local, and maybe
    // stale slots of the same frames): nothing else holds it.
    for path in paths {
      XCTAssertEqual(describe(path), "stack", "\(record)")
      let root = try XCTUnwrap(path["root"] as? [String: Any])
      XCTAssertEqual(root["tid"] as? Int, worker, "\(record)")
    }
    try assertHoldersRightAfterRelease(log, id: id)
    // It died once the worker let go: a `dealloc`, after the holders record.
    let kinds = history(of: id, in: log)
    XCTAssertEqual(kinds, ["enqueue", "release", "holders", "dealloc"])
  }

  private func checkLateObject(_ build: ProbeBuild) throws {
    let log = try holderLog("late", build)
    let id = try survivorID(in: log)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["release"])
    if let record = holders.first { assertPaths(record, ["global TraceProbe.lateHolder"]) }
    let kinds = history(of: id, in: log)
    XCTAssertEqual(kinds, ["enqueue", "release", "holders", "dealloc"])
    try assertEndCounts(log, scans: 1, skipped: 0)
  }

  private func checkFreedObject(_ build: ProbeBuild) throws {
    let log = try holderLog("freed", build)
    XCTAssertEqual(log.kind("release").compactMap { $0["freed"] as? Bool }, [true])
    XCTAssertTrue(log.kind("holders").isEmpty)
    try assertEndCounts(log, scans: 0, skipped: 0)
  }

  private func checkSamePath(_ build: ProbeBuild) throws {
    let log = try holderLog("same-path", build)
    let released = log.kind("holders").filter { $0.why == "release" }
    XCTAssertEqual(released.count, 2)
    XCTAssertEqual(Set(released.compactMap { $0["id"] as? Int }).count, 2)
    let expected = [
      "global TraceProbe.HolderCache.shared → TraceProbe.HolderCache.keep"
        + " → \(arrayStorage)[element of 2]"
    ]
    for record in released {
      XCTAssertEqual(record["type"] as? String, "TraceProbe.HeldThumb")
      XCTAssertEqual(paths(of: record).map(Self.withoutIndexes), expected, "\(record)")
    }
    // The element indexes differ: two objects, one path shape.
    let indexes = released.compactMap { record -> Int? in
      let steps = (record["paths"] as? [[String: Any]])?.first?["steps"] as? [[String: Any]]
      return steps?.last?["element"] as? Int
    }
    XCTAssertEqual(Set(indexes), [0, 1])
  }

  private func checkCheckScans(_ build: ProbeBuild) throws {
    let log = try holderLog("check", build)
    let checks = log.kind("check")
    XCTAssertEqual(checks.count, 2)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["check"])
    let record = try XCTUnwrap(holders.first)
    let global = try XCTUnwrap(checks.first { $0["label"] as? String == "holders.check.global" })
    XCTAssertEqual(record["obj"] as? String, global["obj"] as? String)
    XCTAssertEqual(record["type"] as? String, "TraceProbe.HeldThumb")
    XCTAssertNil(record["id"], "an object the tracer never saw has no id")
    assertPaths(record, ["global TraceProbe.lateHolder"])
    // The record follows its check.
    let checkIndex = try XCTUnwrap(
      log.records.firstIndex { $0["label"] as? String == "holders.check.global" })
    XCTAssertEqual(log.records[checkIndex + 1]["ev"] as? String, "holders")
  }

  private func checkCaps(_ build: ProbeBuild) throws {
    let log = try holderLog("cap", build)
    XCTAssertEqual(log.kind("release").filter { $0["freed"] as? Bool == false }.count, 10)
    let holders = log.kind("holders")
    // Ten survivors of one signature: four scans at their releases, none at the end.
    XCTAssertEqual(holders.map(\.why), Array(repeating: "release", count: capPerSignature))
    try assertEndCounts(log, scans: capPerSignature, skipped: 10 - capPerSignature + 10)
  }

  /// Every scan, while another thread keeps looking at the survivors (taking strong
  /// references) and draining, finds the one real holder and nothing of the recorder's.
  private func checkBusy(_ build: ProbeBuild) throws {
    let log = try holderLog("busy", build)
    let id = try survivorID(in: log)
    let holders = log.kind("holders")
    XCTAssertEqual(holders.map(\.why), ["release", "check", "check", "end"])
    XCTAssertGreaterThan(log.kind("mark").count, 1)
    for record in holders {
      XCTAssertEqual(record["id"] as? Int, id)
      assertPaths(record, ["global TraceProbe.lateHolder"])
    }
  }

  private func checkSurvival(_ build: ProbeBuild) throws {
    let executable = try build.executable()
    // Holders on, tracing off: the hooks alone.
    let untraced = try ProbeRun.run(
      ["holders-survival"], environment: ["DEALLOCTRACE_HOLDERS": "1"], timeout: .seconds(300),
      executable: executable)
    XCTAssertEqual(untraced.status, 0, untraced.standardError)
    XCTAssertTrue(
      untraced.standardOutput.hasPrefix("survived 4000 1 512 true"), untraced.standardOutput)
    // Holders and tracing on.
    let log = directory.appendingPathComponent("survival-\(build).jsonl")
    let traced = try ProbeRun.run(
      ["holders-survival"],
      environment: ["DEALLOCTRACE_HOLDERS": "1", "DEALLOCTRACE_LOG": log.path],
      timeout: .seconds(300),
      executable: executable)
    XCTAssertEqual(traced.status, 0, traced.standardError)
    XCTAssertEqual(traced.standardError, "")
    XCTAssertTrue(traced.standardOutput.hasPrefix("survived"), traced.standardOutput)
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("session").first?["holders"] as? Bool, true)
    XCTAssertEqual(parsed.records.last?["ev"] as? String, "end")
  }

  // MARK: Helpers

  /// Runs one holder scenario with holders and tracing on; checks what every such run
  /// must satisfy (exit 0, silent stderr, `holders: true`, the shared validator).
  private func holderLog(
    _ scenario: String, _ build: ProbeBuild, file: StaticString = #filePath, line: UInt = #line
  ) throws -> ParsedLog {
    let url = directory.appendingPathComponent("\(scenario)-\(build).jsonl")
    let run = try ProbeRun.run(
      ["holders", scenario],
      environment: ["DEALLOCTRACE_LOG": url.path, "DEALLOCTRACE_HOLDERS": "1"],
      executable: try build.executable())
    XCTAssertEqual(run.status, 0, run.standardError, file: file, line: line)
    XCTAssertEqual(run.standardError, "", file: file, line: line)
    let log = try ParsedLog(contentsOf: url)
    XCTAssertEqual(log.kind("session").first?["holders"] as? Bool, true, file: file, line: line)
    if let verdict = ContractValidator.verdict(for: url) {
      XCTAssertEqual(verdict.status, 0, verdict.output, file: file, line: line)
    }
    for record in log.kind("holders") {
      for field in ["t", "obj", "type", "why", "direct", "more", "paths", "scan_us"] {
        XCTAssertNotNil(record[field], "holders lacks \(field): \(record)", file: file, line: line)
      }
      // Nothing of the recorder's or the queue's own ever holds the object.
      let text = "\(record)"
      for module in ["DeallocTrace.", "DeallocQueue.", "CHolders"] {
        XCTAssertFalse(text.contains(module), "\(record)", file: file, line: line)
      }
    }
    return log
  }

  /// The kinds of the records about object `id`, in order (`stack` records have ids of
  /// their own).
  private func history(of id: Int, in log: ParsedLog) -> [String] {
    log.records.filter { $0["id"] as? Int == id && $0["ev"] as? String != "stack" }
      .compactMap { $0["ev"] as? String }
  }

  /// The id of the scenario's one survivor.
  private func survivorID(
    in log: ParsedLog, file: StaticString = #filePath, line: UInt = #line
  ) throws -> Int {
    let survivors = log.kind("release").filter { $0["freed"] as? Bool == false }
    XCTAssertEqual(survivors.count, 1, "\(survivors)", file: file, line: line)
    return try XCTUnwrap(survivors.first?["id"] as? Int, file: file, line: line)
  }

  /// Asserts the record's paths, described (`describe(_:)`), one per direct holder.
  private func assertPaths(
    _ record: [String: Any], _ expected: [String], file: StaticString = #filePath,
    line: UInt = #line
  ) {
    XCTAssertEqual(paths(of: record), expected, "\(record)", file: file, line: line)
    XCTAssertEqual(record["direct"] as? Int, expected.count, "\(record)", file: file, line: line)
    XCTAssertEqual(record["more"] as? Int, 0, "\(record)", file: file, line: line)
  }

  private func paths(of record: [String: Any]) -> [String] {
    (record["paths"] as? [[String: Any]] ?? []).map(describe)
  }

  /// A path as one line: the root (`global SYMBOL`, `stack`, `cycle`, `heap`, `none`), then
  /// each step: `TYPE.FIELD`, `TYPE[INDEX of COUNT]`, `TYPE(captures A, B)` or `TYPE+OFF`.
  private func describe(_ path: [String: Any]) -> String {
    let root = path["root"] as? [String: Any] ?? [:]
    var parts: [String] = []
    let kind = root["kind"] as? String ?? "?"
    parts.append(kind == "global" ? "global \(root["sym"] as? String ?? "?")" : kind)
    for step in path["steps"] as? [[String: Any]] ?? [] {
      let type = step["type"] as? String ?? "?"
      if let field = step["field"] as? String {
        parts.append("\(type).\(field)")
      } else if let element = step["element"] as? Int {
        parts.append("\(type)[\(element) of \(step["count"] as? Int ?? -1)]")
      } else if let captures = step["captures"] as? [String] {
        parts.append("\(type)(captures \(captures.joined(separator: ", ")))")
      } else {
        parts.append("\(type)+\(step["off"] as? Int ?? -1)")
      }
    }
    return parts.joined(separator: " → ")
  }

  /// `[3 of 5]` → `[element of 5]`: the path's shape without indexes.
  private static func withoutIndexes(_ text: String) -> String {
    text.replacingOccurrences(
      of: #"\[\d+ of "#, with: "[element of ", options: .regularExpression)
  }

  private func assertHoldersRightAfterRelease(
    _ log: ParsedLog, id: Int, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let release = try XCTUnwrap(
      log.records.firstIndex { $0["ev"] as? String == "release" && $0["id"] as? Int == id },
      file: file, line: line)
    let next = log.records[release + 1]
    XCTAssertEqual(next["ev"] as? String, "holders", "\(next)", file: file, line: line)
    XCTAssertEqual(next["why"] as? String, "release", file: file, line: line)
    XCTAssertEqual(next["id"] as? Int, id, file: file, line: line)
  }

  private func assertEndHoldersBeforeEnd(
    _ log: ParsedLog, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let end = try XCTUnwrap(
      log.records.lastIndex { $0["ev"] as? String == "end" }, file: file, line: line)
    let endHolders = log.records.indices.filter {
      log.records[$0]["ev"] as? String == "holders" && log.records[$0].why == "end"
    }
    XCTAssertFalse(endHolders.isEmpty, file: file, line: line)
    XCTAssertTrue(endHolders.allSatisfy { $0 < end }, file: file, line: line)
  }

  private func assertEndCounts(
    _ log: ParsedLog, scans: Int, skipped: Int, file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    let end = try XCTUnwrap(log.kind("end").last, file: file, line: line)
    XCTAssertEqual(end["holder_scans"] as? Int, scans, "\(end)", file: file, line: line)
    XCTAssertEqual(end["holder_scans_skipped"] as? Int, skipped, "\(end)", file: file, line: line)
  }

  /// The array storage's type as the scanner names it.
  private let arrayStorage = "Swift._ContiguousArrayStorage<Swift.AnyObject>"
  /// `HolderBudget.maxScansPerSignature`, restated: the test reads the log, not the code.
  private let capPerSignature = 4
}

extension Dictionary where Key == String, Value == Any {
  /// A `holders` record's `why`.
  fileprivate var why: String { self["why"] as? String ?? "" }
}

/// Which build of `TraceProbe` a test runs.
enum ProbeBuild: CustomStringConvertible {
  case debug
  case release

  var description: String { self == .debug ? "debug" : "release" }

  /// The executable: the debug one beside the test bundle, or the release one
  /// (`ReleaseBuild`: SwiftPM decides whether it is stale).
  func executable() throws -> URL {
    switch self {
    case .debug: return ProbeRun.probeURL
    case .release: return try ReleaseBuild.executable("TraceProbe")
    }
  }
}
