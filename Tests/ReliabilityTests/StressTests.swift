import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// Many threads, several queues, tracing on, explicit drains and marks racing the timers.
final class StressTests: XCTestCase {
  /// `RELIABILITY_STRESS_OBJECTS` lowers the count for slow builds (ThreadSanitizer).
  private var objectCount: Int {
    ProcessInfo.processInfo.environment["RELIABILITY_STRESS_OBJECTS"].flatMap { Int($0) }
      ?? 1_000_000
  }

  func testEveryObjectDeinitsOnceAndEveryEnqueueHasItsRelease() throws {
    let scratch = try ScratchDirectory("stress")
    defer { scratch.remove() }
    let log = scratch.file("stress.jsonl")
    let objects = objectCount

    let child = try StressChild.run(["stress", log, String(objects), "8"])

    XCTAssertEqual(child.sanitizerReports, [], child.standardError)
    XCTAssertEqual(
      child.status, 0, "stdout: \(child.standardOutput) stderr: \(child.standardError)")
    XCTAssertTrue(
      child.standardOutput.contains(
        "stress objects=\(objects) deinits=\(objects) missing=0 repeated=0 settled=true"),
      child.standardOutput)

    let tally = try LogTally.read(log)
    let report = try DeallocAnalysis.analyze([log])
    XCTAssertEqual(report.warnings.map(\.description), [])
    XCTAssertEqual(tally.sessions.count, 1)
    XCTAssertEqual(tally.enqueueCount, objects)
    XCTAssertEqual(tally.objects.count, objects, "ids must be unique")
    XCTAssertEqual(tally.duplicateEnqueues, 0)
    XCTAssertEqual(tally.releasesOfUnknownIDs, 0)
    let unreleased = tally.objects.filter { $0.value.releases != 1 }
    XCTAssertEqual(
      unreleased.count, 0, "enqueues without exactly one release: \(unreleased.prefix(5))")
    let end = try XCTUnwrap(tally.sessions.last?.end, "the session must end cleanly")
    XCTAssertEqual(end.lost, 0)
    XCTAssertEqual(end.pending, 0)
    XCTAssertEqual(end.reason, "explicit")
    XCTAssertGreaterThan(tally.marks.count, 8 * (objects / 8 / 4999), "marks from every worker")
    // 8 workers, the drainer, the main thread, and the timers' dispatch workers.
    XCTAssertGreaterThanOrEqual(tally.threadIDs.count, 10)

    XCTAssertEqual(report.summary, tally.expectedSummary())
    // Nothing else holds the objects, so each release frees it: `enqueue` moves the object
    // into the queue and keeps no copy that a concurrent drain could see as a holder.
    XCTAssertEqual(report.summary.freed, objects)
    XCTAssertEqual(report.summary.late + report.summary.leaked, 0)
    XCTAssertEqual(report.summary.pending + report.summary.stuck + report.summary.neverReleased, 0)
    XCTAssertFalse(report.hasIncompleteSession)
    XCTAssertEqual(
      Set(report.sessions.flatMap(\.queues).map(\.queue)), ["stress-a", "stress-b", "stress-c"])
  }
}
