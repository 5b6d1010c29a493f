import Foundation
import TestSupport
import XCTest

/// Values handed to the queue, traced in the probe (`values`): each `enqueue` names the
/// value's type, not the box the queue keeps it in, with a collection's element count, and
/// each `release` frees the box.
final class ValueTraceTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("values").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  private func tracedValues() throws -> (ParsedLog, URL) {
    let log = directory.appendingPathComponent("values.jsonl")
    let run = try ProbeRun.run(["values"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    return (try ParsedLog(contentsOf: log), log)
  }

  func testAnEnqueuedValueIsNamedByItsTypeWithItsElementCount() throws {
    let (log, url) = try tracedValues()
    let enqueues = log.kind("enqueue")
    XCTAssertEqual(
      enqueues.map { $0["type"] as? String },
      [
        "Swift.Array<TraceProbe.CellModel>", "Swift.Dictionary<Swift.Int, TraceProbe.CellModel>",
        "TraceProbe.FeedSections", "TraceProbe.FeedController",
      ])
    XCTAssertEqual(enqueues.map { $0["count"] as? Int }, [3, 2, nil, nil])
    XCTAssertEqual(enqueues.map { $0["depth"] as? Int }, [1, 2, 3, 4], "one entry per value")
    for enqueue in enqueues {
      XCTAssertFalse(
        (enqueue["type"] as? String ?? "").contains("ValueBox"), "names the box: \(enqueue)")
    }
    if let verdict = ContractValidator.verdict(for: url) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
  }

  func testEachValuesReleaseFreesItsBox() throws {
    let (log, _) = try tracedValues()
    let ids = log.kind("enqueue").compactMap { $0["id"] as? Int }
    let releases = log.kind("release")
    XCTAssertEqual(Set(releases.compactMap { $0["id"] as? Int }), Set(ids))
    for release in releases {
      XCTAssertEqual(release["freed"] as? Bool, true, "\(release)")
    }
    XCTAssertEqual(log.kind("drain").map { $0["n"] as? Int }, [4])
    XCTAssertEqual(log.kind("end").first?["pending"] as? Int, 0)
  }

  /// The stack is cut as an object's is: inside the queue's enqueue, then the caller.
  func testAValuesEnqueueStackNamesTheEnqueuingFunction() throws {
    let (log, _) = try tracedValues()
    let array = try XCTUnwrap(log.kind("enqueue").first)
    let stackID = try XCTUnwrap(array["stack"] as? Int)
    let stack = try XCTUnwrap(log.kind("stack").first { $0["id"] as? Int == stackID })
    let symbols = (stack["frames"] as? [[String: Any]] ?? []).compactMap { $0["sym"] as? String }
    XCTAssertTrue(symbols.first?.contains("DeallocQueue") ?? false, "\(symbols)")
    XCTAssertTrue(symbols.contains("TraceProbe.runValueScenario() -> ()"), "\(symbols)")
    let tracerNames = ["QueueTracing", "QueueRecorder", "DeallocHooks", "cunwind", "ctrace"]
    XCTAssertFalse(
      symbols.contains { symbol in tracerNames.contains { symbol.contains($0) } },
      "tracer frames: \(symbols)")
  }
}
