import Foundation
import TestSupport
import XCTest

/// What `end` says when a session closes with work in flight: `pending` counts objects
/// still in a queue, `lost` the records the closing session refused, and survivors that
/// die just before `finish()` still get their `dealloc`.
final class TraceEndTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  func testAReleaseRefusedByTheClosingSessionIsCountedLostNotPending() throws {
    let log = directory.appendingPathComponent("lost.jsonl")
    let run = try ProbeRun.run(["lost-at-finish", log.path], timeout: .seconds(20))
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    XCTAssertEqual(run.standardOutput, "waiting 3\n")
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("enqueue").count, 4)
    // The drain began before `finish()`; the release it was running when `finish()` closed
    // the buffer was refused: the one record lost, and its object is in no queue.
    XCTAssertEqual(parsed.kind("drain").map { $0["q"] as? String }, ["racing"])
    XCTAssertEqual(parsed.kind("release").count, 0)
    let end = try XCTUnwrap(parsed.kind("end").first)
    XCTAssertEqual(end["why"] as? String, "explicit")
    XCTAssertEqual(end["lost"] as? Int, 1)
    XCTAssertEqual(end["pending"] as? Int, 3)
    XCTAssertEqual(parsed.records.last?["ev"] as? String, "end")
    // (The shared validator is not asked: it flags any `lost` above 0 as a problem, and
    // derives `pending` from the log alone, which cannot know about a refused release.)
  }

  /// An enqueue that loaded one session but took its id after that session finished and the
  /// next started: before the fix its id fell in the second session's range, so the first
  /// refused its enqueue (`lost: 1`) and the second recorded a release it never saw enqueued.
  func testAnEnqueueStraddlingARestartIsRecordedInNeitherSession() throws {
    let first = directory.appendingPathComponent("first.jsonl")
    let second = directory.appendingPathComponent("second.jsonl")
    let run = try ProbeRun.run(["id-straddle", first.path, second.path], timeout: .seconds(120))
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardOutput, "straddled 0\n", run.standardError)
    let before = try ParsedLog(contentsOf: first)
    XCTAssertEqual(before.kind("enqueue").count, 0)
    XCTAssertEqual(try XCTUnwrap(before.kind("end").first)["lost"] as? Int, 0)
    let after = try ParsedLog(contentsOf: second)
    XCTAssertEqual(after.kind("release").count, 0, "a release whose enqueue the session never saw")
    XCTAssertEqual(try XCTUnwrap(after.kind("end").first)["lost"] as? Int, 0)
    if let verdict = ContractValidator.verdict(for: second) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
  }

  func testObjectsStillQueuedAtExitArePendingAndNothingIsLost() throws {
    let log = directory.appendingPathComponent("pending.jsonl")
    let run = try ProbeRun.run(["pending-at-exit"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardOutput, "waiting 5\n")
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("enqueue").count, 6)
    XCTAssertEqual(parsed.kind("release").count, 1)
    let end = try XCTUnwrap(parsed.kind("end").first)
    XCTAssertEqual(end["why"] as? String, "exit")
    XCTAssertEqual(end["pending"] as? Int, 5)
    XCTAssertEqual(end["lost"] as? Int, 0)
  }

  func testSurvivorsThatDieJustBeforeFinishAllGetTheirDeallocWhileOtherLooksRace() throws {
    let log = directory.appendingPathComponent("race.jsonl")
    let run = try ProbeRun.run(["survivor-race", log.path], timeout: .seconds(60))
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    var sessions: [(survivors: Set<Int>, deallocs: Set<Int>, ended: Bool)] = []
    for record in try ParsedLog(contentsOf: log).records {
      let kind = record["ev"] as? String
      if kind == "session" { sessions.append(([], [], false)) }
      guard !sessions.isEmpty else { continue }
      let id = record["id"] as? Int ?? -1
      switch kind {
      case "release" where record["freed"] as? Bool == false:
        sessions[sessions.count - 1].survivors.insert(id)
      case "dealloc":
        XCTAssertFalse(
          sessions[sessions.count - 1].ended, "a dealloc after end in session \(sessions.count)")
        sessions[sessions.count - 1].deallocs.insert(id)
      case "end":
        sessions[sessions.count - 1].ended = true
      default:
        break
      }
    }
    XCTAssertEqual(sessions.count, 6)
    for (index, session) in sessions.enumerated() {
      XCTAssertTrue(session.ended, "session \(index) has no end")
      XCTAssertEqual(session.survivors.count, 2000, "session \(index)")
      XCTAssertEqual(
        session.survivors.subtracting(session.deallocs).count, 0,
        "session \(index): survivors that died before finish() are reported leaked")
    }
  }
}
