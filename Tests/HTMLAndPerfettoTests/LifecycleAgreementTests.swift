import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import XCTest

/// The report, the Perfetto export and `explain` give every object the same state and every
/// check the same verdict, on a log with each state of the life cycle: they call the same
/// transitions (`Lifecycle/ObjectLifecycle+Transitions.swift`).
final class LifecycleAgreementTests: XCTestCase {
  /// One object per state, each of its own type (named after the state), and one check per
  /// verdict: session 1 ends cleanly, session 2 has no `end` (its last record is at 3 s).
  private static let lines: [String] = {
    func session(_ pid: Int) -> String {
      #"{"ev":"session","v":1,"t":0,"pid":\#(pid),"exe":"/app/T","wall":"2026-01-01T00:00:00Z","delay_ms":100,"frames":0}"#
    }
    func enqueue(_ t: Int, _ id: Int, _ obj: String, _ type: String) -> String {
      #"{"ev":"enqueue","t":\#(t),"id":\#(id),"obj":"\#(obj)","type":"\#(type)","q":"shared","tid":1,"depth":1}"#
    }
    func release(_ t: Int, _ id: Int, freed: Bool) -> String {
      #"{"ev":"release","t":\#(t),"id":\#(id),"tid":2,"freed":\#(freed)\#(freed ? "" : #","rc":1"#)}"#
    }
    func check(_ t: Int, _ obj: String, _ type: String, _ label: String, id: Int?) -> String {
      let idField = id.map { #","id":\#($0)"# } ?? ""
      return
        #"{"ev":"check","t":\#(t),"obj":"\#(obj)","type":"\#(type)","alive":true,"label":"\#(label)"\#(idField)}"#
    }
    return [
      session(1),
      enqueue(1_000, 1, "0xa1", "Freed"),
      enqueue(1_100, 2, "0xa2", "Late"),
      enqueue(1_200, 3, "0xa3", "Leaked"),
      enqueue(1_300, 4, "0xa4", "NeverReleased"),
      enqueue(1_400, 5, "0xa5", "CheckedWhileQueued"),
      enqueue(1_450, 6, "0xa6", "CheckedThenHeld"),
      check(1_500, "0xa5", "CheckedWhileQueued", "F: queued, then freed", id: 5),
      check(1_500, "0xa6", "CheckedThenHeld", "T: queued, then held", id: 6),
      check(1_500, "0xdead", "Gone", "U: never enqueued", id: nil),
      release(2_000, 1, freed: true),
      release(2_100, 2, freed: false),
      release(2_200, 3, freed: false),
      release(3_000, 5, freed: true),
      release(3_100, 6, freed: false),
      #"{"ev":"dealloc","t":5000,"id":2}"#,
      #"{"ev":"dealloc","t":6000,"id":6}"#,
      #"{"ev":"end","t":10000,"why":"exit","pending":1,"lost":0}"#,
      session(2),
      enqueue(100_000_000, 1, "0xb1", "Stuck"),
      enqueue(2_900_000_000, 2, "0xb2", "Pending"),
      #"{"ev":"mark","t":3000000000,"label":"killed","tid":1}"#,
    ]
  }()

  func testTheReportTheExportAndExplainAgreeOnEveryStateAndVerdict() throws {
    let url = try scratchDirectory("lifecycle").url.appendingPathComponent("states.jsonl")
    try Data((Self.lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    let expected: [String: String] = [
      "Freed": "freed", "Late": "late", "Leaked": "leaked", "NeverReleased": "neverReleased",
      "CheckedWhileQueued": "freed", "CheckedThenHeld": "late", "Stuck": "stuck",
      "Pending": "pending",
    ]
    let expectedVerdicts = ["F": "falseLeak", "T": "trueLeak", "U": "trueLeak"]

    let report = try DeallocAnalysis.analyze([url.path])
    var reported: [String: String] = [:]
    for row in report.types {
      for state in ObjectState.allCases where row[state] > 0 {
        XCTAssertNil(reported[row.type], "\(row.type): one object, one state")
        reported[row.type] = state.rawValue
      }
    }
    XCTAssertEqual(reported, expected)
    let reportedVerdicts = Dictionary(
      uniqueKeysWithValues: report.checks.map {
        (String($0.check.label.prefix(1)), $0.verdict.rawValue)
      })
    XCTAssertEqual(reportedVerdicts, expectedVerdicts)

    let (exported, exportedVerdicts) = try export(url)
    XCTAssertEqual(exported, reported)
    XCTAssertEqual(exportedVerdicts, reportedVerdicts)

    let (explained, explainedVerdicts) = try explain(url, types: Array(expected.keys) + ["Gone"])
    XCTAssertEqual(explained, reported)
    XCTAssertEqual(explainedVerdicts, reportedVerdicts)
  }

  /// Each object's state by its type, and each check's verdict by its label's first letter,
  /// as the Perfetto export tells them: a release's `freed`, then a late dealloc or a leak
  /// instant for a survivor, or an unreleased slice's `state`.
  private func export(_ url: URL) throws -> (states: [String: String], verdicts: [String: String]) {
    var exporter = PerfettoExporter(output: StringTraceOutput())
    var reader = LogReader()
    try reader.read(try LogInput.resolve([url.path]), into: &exporter)
    try exporter.finish()
    let trace = TraceValidation(json: exporter.output.text)
    XCTAssertEqual(trace.problems, [])
    var states: [String: String] = [:]
    for end in trace.ofPhase("e") {
      let args = TraceValidation.args(end)
      let type = try XCTUnwrap(end["name"] as? String)
      if let state = args["state"] as? String {
        states[type] = state
      } else if args["freed"] as? Bool == true {
        states[type] = "freed"
      }
    }
    var verdicts: [String: String] = [:]
    for instant in trace.ofPhase("i") {
      let args = TraceValidation.args(instant)
      let name = try XCTUnwrap(instant["name"] as? String)
      switch instant["cat"] as? String {
      case "dealloc": states[String(name.dropFirst("late dealloc: ".count))] = "late"
      case "leak": states[String(name.dropFirst("leaked: ".count))] = "leaked"
      case "check":
        let label = try XCTUnwrap(args["label"] as? String)
        verdicts[String(label.prefix(1))] = args["verdict"] as? String
      default: break
      }
    }
    return (states, verdicts)
  }

  /// Each object's state by its type, and each check's verdict by its label's first letter,
  /// as `explain` tells them.
  private func explain(_ url: URL, types: [String]) throws
    -> (states: [String: String], verdicts: [String: String])
  {
    var states: [String: String] = [:]
    var verdicts: [String: String] = [:]
    for type in types {
      var collector = ObjectHistoryCollector(.type(type))
      var reader = LogReader()
      try reader.read(try LogInput.resolve([url.path]), into: &collector)
      for history in collector.histories {
        if let state = history.state { states[history.type] = state.rawValue }
        for entry in history.entries {
          guard case .check(let check) = entry.record, let verdict = entry.verdict else { continue }
          verdicts[String(check.label.prefix(1))] = verdict.rawValue
        }
      }
    }
    return (states, verdicts)
  }
}
