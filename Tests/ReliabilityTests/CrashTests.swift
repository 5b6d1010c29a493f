import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// A traced child killed with SIGKILL at random moments: what it wrote must stay readable,
/// and what the child knew to be written (its `written N` lines) must be there.
///
/// Nothing here is timed: whether the writer keeps its 100 ms flush bound on this machine
/// at the moment of the kill is not this test's question (WriterFlushTests checks the
/// writer's rule on a simulated clock); that a SIGKILL loses nothing already written is.
final class CrashTests: XCTestCase {
  /// The heartbeat child's batch: enqueues on the timer-drained shared queue, and on the
  /// queue it drains itself (see HeartbeatRun in Examples/StressChild).
  private static let timerQueuedPerBatch = 20
  private static let drainedPerBatch = 5
  private static let runs = 10

  func testKilledChildLeavesAReadableIncompleteLogMissingNothingOlderThanTheFlushInterval()
    throws
  {
    var random = SeededRandom.printed(for: "CrashTests")
    let scratch = try ScratchDirectory("crash")
    defer { scratch.remove() }
    var checkedBeats = 0
    for run in 0..<Self.runs {
      let delay = UInt64.random(in: 0...600_000_000, using: &random)
      checkedBeats += try killAndCheck(
        run: run, afterFirstBeatPlus: delay, log: scratch.file("crash-\(run).jsonl"))
    }
    XCTAssertGreaterThan(checkedBeats, 0, "no run was killed after a `written` line")
  }

  /// Returns how many beats were known written at the kill, and so checked.
  private func killAndCheck(run: Int, afterFirstBeatPlus delay: UInt64, log: String) throws
    -> Int
  {
    let context = "run \(run), kill \(delay / 1_000_000) ms after the first beat"
    let child = try ChildProcess(
      StressChild.executable(), ["heartbeat", log], standardError: .inherited
    ).start()
    let firstBeat = child.output.wait(
      until: { String(decoding: $0, as: UTF8.self).contains("beat ") },
      deadline: Date(timeIntervalSinceNow: 20))
    guard firstBeat else {
      child.stop()
      XCTFail("\(context): no heartbeat within 20 s")
      return 0
    }
    usleep(useconds_t(delay / 1000))  // a random moment, not a deadline
    child.signal(SIGKILL)
    let run = child.wait()
    XCTAssertEqual(run.signal, SIGKILL, context)
    // Every line was written before the kill.
    let heard = Heartbeats(run.standardOutput)

    // Every complete line parses, for the tests' parser and for the product's reader; at most
    // the last is cut short.
    let tally = try LogTally.read(log)
    let report = try DeallocAnalysis.analyze([log])
    let warnings = report.warnings.map(\.kind)
    XCTAssertTrue(warnings == [] || warnings == [.truncatedLine], "\(context): \(warnings)")
    XCTAssertEqual(tally.sessions.count, 1, context)
    XCTAssertNil(tally.sessions.last?.end, "\(context): a killed session has no end")
    XCTAssertEqual(tally.releasesOfUnknownIDs, 0, context)
    XCTAssertEqual(tally.duplicateEnqueues, 0, context)

    // Nothing known written is missing: every batch up to the last `written` line has its
    // mark, and before the mark all of its records and every earlier batch's: the enqueues,
    // and the explicit drain and releases the main thread recorded.
    let marks = Dictionary(
      tally.marks.filter { $0.label.hasPrefix("batch ") }.map { ($0.label, $0) },
      uniquingKeysWith: { first, _ in first })
    let old = heard.beats.filter { $0 <= heard.lastWritten ?? -1 }
    for beat in old {
      guard let mark = marks["batch \(beat)"] else {
        XCTFail(
          "\(context): batch \(beat), written by \(heard.lastWritten ?? -1) before the kill,"
            + " is missing from the log (\(marks.count) batches logged)")
        break
      }
      let batches = beat + 1
      XCTAssertEqual(
        mark.mainThreadEnqueuesBefore, batches * (Self.timerQueuedPerBatch + Self.drainedPerBatch),
        "\(context): enqueues before batch \(beat)")
      XCTAssertEqual(
        mark.mainThreadExplicitDrainsBefore, batches,
        "\(context): explicit drains before batch \(beat)")
      XCTAssertEqual(
        mark.mainThreadReleasesBefore, batches * Self.drainedPerBatch,
        "\(context): releases before batch \(beat)")
    }

    // The report marks the session incomplete and classifies the rest as the contract says.
    XCTAssertTrue(report.hasIncompleteSession, context)
    XCTAssertEqual(report.sessions.first?.isComplete, false, context)
    XCTAssertEqual(report.summary, tally.expectedSummary(), context)
    XCTAssertEqual(report.summary.neverReleased, 0, "\(context): no end, so nothing is 'never'")
    XCTAssertEqual(
      report.summary.enqueued,
      report.summary.released + report.summary.pending + report.summary.stuck, context)
    if old.count > 100 {
      // Batch 0 keeps one object for 90 batches (at least 270 ms, well past its release)
      // and another forever: by batch 100 the first is late and the second leaked.
      XCTAssertGreaterThanOrEqual(report.summary.leaked, 1, context)
      XCTAssertGreaterThanOrEqual(report.summary.late, 1, context)
    }
    return old.count
  }
}

/// The child's `beat N` and `written N` lines.
private struct Heartbeats {
  var beats: [Int] = []
  /// The last batch the child knew written.
  var lastWritten: Int?

  /// Complete lines only: a line the kill cut short says nothing.
  init(_ output: String) {
    for line in output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
      if line.hasPrefix("written "), let batch = Int(line.dropFirst(8)) {
        lastWritten = batch
      } else if line.hasPrefix("beat "), let batch = Int(line.dropFirst(5)) {
        beats.append(batch)
      }
    }
  }
}
