import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import XCTest

/// The Perfetto export: structurally valid, one slice per object with ids that never repeat
/// (not across sessions, not when addresses are reused), microsecond timestamps, depth
/// counters in time order, instants for marks, checks and late deallocs.
final class PerfettoExporterTests: XCTestCase {
  private func export(_ paths: [String], stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter)
    throws -> (trace: TraceValidation, exporter: PerfettoExporter<StringTraceOutput>)
  {
    var exporter = PerfettoExporter(output: StringTraceOutput(), stuckAfter: stuckAfter)
    var reader = LogReader()
    try reader.read(try LogInput.resolve(paths), into: &exporter)
    try exporter.finish()
    return (TraceValidation(json: exporter.output.text), exporter)
  }

  func testFeedFixtureIsAValidTraceWithASlicePerObject() throws {
    let (trace, exporter) = try export([Fixtures.path("feed.jsonl")])
    XCTAssertEqual(trace.problems, [])
    let report = try Fixtures.report("feed.jsonl")
    XCTAssertEqual(trace.ofPhase("b").count, report.summary.enqueued)
    XCTAssertEqual(trace.ofPhase("e").count, report.summary.enqueued)
    XCTAssertEqual(exporter.counts.slices, report.summary.enqueued)
    // The first enqueue is at t = 1,200,000 ns: 1,200 µs.
    let controller = try XCTUnwrap(trace.named("Feed.DataController", phase: "b").first)
    XCTAssertEqual(controller["ts"] as? Double ?? (controller["ts"] as? Int).map(Double.init), 1200)
    XCTAssertEqual(controller["cat"] as? String, "object")
    XCTAssertEqual(TraceValidation.args(controller)["obj"] as? String, "0x600000c01230")
  }

  func testMicrosecondsAreExactForSubMicrosecondTimes() throws {
    let (trace, _) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    // Session 1: enqueues at 1,000 and 2,500 ns.
    let first = trace.ofPhase("b").prefix(2).map { ($0["ts"] as? Double) ?? -1 }
    XCTAssertEqual(first, [1, 2.5])
    XCTAssertTrue(
      !trace.ofPhase("b").contains { ($0["ts"] as? Double).map { $0 > 1e7 } ?? false },
      "no timestamp is in nanoseconds")
  }

  func testIdsAreUniqueAcrossSessionsAndReusedAddresses() throws {
    let (trace, _) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    XCTAssertEqual(trace.problems, [])
    let begins = trace.ofPhase("b")
    XCTAssertEqual(begins.count, 7)
    let ids = begins.compactMap { $0["id"] as? Int }
    XCTAssertEqual(Set(ids).count, 7, "one id per object")
    let addresses = begins.compactMap { TraceValidation.args($0)["obj"] as? String }
    XCTAssertEqual(addresses.filter { $0 == "0x7f0000001000" }.count, 4, "the address is reused")
    XCTAssertFalse(ids.contains { String($0, radix: 16).hasPrefix("7f") }, "never the address")
    XCTAssertEqual(Set(begins.compactMap { $0["pid"] as? Int }), [1, 2], "a process per session")
  }

  func testUnreleasedObjectsEndAtTheSessionsLastRecordWithTheirState() throws {
    let (trace, exporter) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    let unreleased = trace.ofPhase("e").filter {
      TraceValidation.args($0)["unreleased"] as? Bool == true
    }
    let states = unreleased.map {
      "\($0["pid"]!) \($0["name"]!) \(TraceValidation.args($0)["state"]!)"
    }
    XCTAssertEqual(
      states.sorted(),
      [
        "1 App.Cell neverReleased", "2 App.Cell stuck", "2 App.Pending pending",
        "2 App.Stuck stuck",
      ])
    // Session 2 has no end record: its last record is the mark at 3 s.
    for end in unreleased where end["pid"] as? Int == 2 {
      XCTAssertEqual(end["ts"] as? Double ?? (end["ts"] as? Int).map(Double.init), 3_000_000)
    }
    XCTAssertEqual(exporter.counts.unreleasedSlices, 4)
  }

  func testInstantsForMarksChecksLateDeallocsAndLeaks() throws {
    let (trace, _) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    let instants = trace.ofPhase("i").compactMap { $0["name"] as? String }
    // The check by address matches the address's latest enqueue (id 3, still queued).
    XCTAssertTrue(instants.contains("false leak: App.Cell"), "\(instants)")
    XCTAssertTrue(instants.contains("true leak: App.Cache"))
    XCTAssertTrue(instants.contains("check passed: App.Gone"))
    XCTAssertTrue(instants.contains("late dealloc: App.Model"))
    XCTAssertTrue(instants.contains("screen closed"))
    XCTAssertTrue(instants.contains("killed"))
    XCTAssertTrue(instants.contains("drain shared"))
    let late = try XCTUnwrap(trace.named("late dealloc: App.Model", phase: "i").first)
    XCTAssertEqual(late["ts"] as? Double ?? (late["ts"] as? Int).map(Double.init), 150_000)
  }

  func testDepthCountersFollowEnqueuesAndReleasesInTimeOrder() throws {
    let (trace, _) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    let shared = trace.named("queue shared", phase: "C").filter { $0["pid"] as? Int == 1 }
    XCTAssertEqual(
      shared.compactMap { TraceValidation.args($0)["depth"] as? Int }, [1, 2, 1, 0, 1])
    // Session 2 releases at 199.999 ms after an enqueue written at 200 ms: the sample is
    // drawn at 200 ms so the track never goes back in time.
    let second = trace.named("queue shared", phase: "C").filter { $0["pid"] as? Int == 2 }
    let times = second.compactMap { $0["ts"] as? Double ?? ($0["ts"] as? Int).map(Double.init) }
    XCTAssertEqual(times, [100_000, 200_000, 200_000, 2_900_000])
  }

  func testProcessesAndThreadsAreNamed() throws {
    let (trace, _) = try export([Fixtures.path("perfetto/sessions.jsonl")])
    let metadata = trace.ofPhase("M")
    let processes = metadata.filter { $0["name"] as? String == "process_name" }
      .compactMap { TraceValidation.args($0)["name"] as? String }
    XCTAssertEqual(processes, ["First (pid 500) · session 1", "Second (pid 600) · session 2"])
    let threads = metadata.filter { $0["name"] as? String == "thread_name" }
      .compactMap { TraceValidation.args($0)["name"] as? String }
    XCTAssertTrue(threads.contains("dealloc.shared"))
    XCTAssertTrue(threads.contains("main"))
  }

  func testHostileNamesRoundTripThroughJSON() throws {
    let (trace, _) = try export([Fixtures.path("html/hostile.jsonl")])
    XCTAssertEqual(trace.problems, [])
    let names = Set(trace.ofPhase("b").compactMap { $0["name"] as? String })
    XCTAssertTrue(names.contains("Evil.Box<\"A&B\">"))
    XCTAssertTrue(names.contains("Evil.Holder<'single' & \"double\">"))
    // A false leak's instant is written at its object's release, after later checks'.
    let labels = trace.ofPhase("i").filter { $0["cat"] as? String == "check" }
      .compactMap { TraceValidation.args($0)["label"] as? String }
    XCTAssertTrue(labels.contains("<script>alert('false leak')</script>"), "\(labels)")
  }

  func testDemoFixtureExportsValidly() throws {
    let (trace, _) = try export([Fixtures.path("html/demo.jsonl")])
    XCTAssertEqual(trace.problems, [])
    XCTAssertEqual(trace.ofPhase("b").count, 585)
  }
}

extension PerfettoExporterTests {
  /// Check instants carry the report's verdict by `t`, whatever the order of the lines: a
  /// release written before an earlier check leaves it a false leak, a release written after
  /// a later check makes it a true leak.
  func testCheckVerdictsFollowTimesNotLineOrder() throws {
    let session =
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/t","wall":"2026-01-01T00:00:00Z","delay_ms":100,"frames":0}"#
    func enqueue(_ id: Int, _ obj: String) -> String {
      #"{"ev":"enqueue","t":10,"id":\#(id),"obj":"\#(obj)","type":"T","q":"shared","tid":1,"depth":\#(id)}"#
    }
    func check(_ t: Int, _ obj: String, _ label: String) -> String {
      #"{"ev":"check","t":\#(t),"obj":"\#(obj)","type":"T","alive":true,"label":"\#(label)"}"#
    }
    let lines = [
      session, enqueue(1, "0xa0"), enqueue(2, "0xb0"),
      #"{"ev":"release","t":100,"id":1,"tid":2,"freed":true}"#,
      check(50, "0xa0", "A: timed before the release written above"),
      check(80, "0xb0", "B: timed after the release written below"),
      #"{"ev":"release","t":60,"id":2,"tid":2,"freed":true}"#,
      check(70, "0xb0", "C: after it, written after it"),
      #"{"ev":"end","t":200,"why":"exit","pending":0,"lost":0}"#,
    ]
    let (verdicts, _) = try checkVerdicts(lines, in: "order.jsonl")
    XCTAssertEqual(verdicts, ["A": "falseLeak", "B": "trueLeak", "C": "trueLeak"])
  }

  /// A check matches its object with the report's lookup, survivors of their release
  /// included: a check timed before a survivor's release, read after that release has left
  /// the recent releases (over a second of log time later), is the same verdict in both: a
  /// true leak, since the release did not free the object (issue 28 item 6).
  func testCheckOfASurvivorWhoseReleaseAgedOutHasTheReportsVerdict() throws {
    let session =
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/t","wall":"2026-01-01T00:00:00Z","delay_ms":100,"frames":0}"#
    func check(_ id: String, _ label: String) -> String {
      #"{"ev":"check","t":1500,"obj":"0xa0","type":"T","alive":true,"label":"\#(label)"\#(id)}"#
    }
    let lines = [
      session,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0xa0","type":"T","q":"shared","tid":1,"depth":1}"#,
      #"{"ev":"release","t":2000,"id":1,"tid":2,"freed":false,"rc":1}"#,
      #"{"ev":"enqueue","t":3000000000,"id":2,"obj":"0xb0","type":"T","q":"shared","tid":1,"depth":1}"#,
      #"{"ev":"release","t":3000000100,"id":2,"tid":2,"freed":true}"#,
      check(#","id":1"#, "A: by id"),
      check("", "B: by address"),
      #"{"ev":"end","t":3000000200,"why":"exit","pending":0,"lost":0}"#,
    ]
    let (verdicts, url) = try checkVerdicts(lines, in: "aged.jsonl")
    let report = try DeallocAnalysis.analyze([url.path])
    let reported = Dictionary(
      uniqueKeysWithValues: report.checks.map {
        (String($0.check.label.prefix(1)), $0.verdict.rawValue)
      })
    XCTAssertEqual(reported, ["A": "trueLeak", "B": "trueLeak"])
    XCTAssertEqual(verdicts, reported)
  }

  /// Writes `lines` as a log named `name`, exports it (which must raise no problem), and
  /// returns each check's verdict by the first letter of its label, with the log's URL.
  private func checkVerdicts(_ lines: [String], in name: String) throws
    -> (verdicts: [String: String], url: URL)
  {
    let url = try scratchDirectory("visual").url.appendingPathComponent(name)
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    let (trace, _) = try export([url.path])
    XCTAssertEqual(trace.problems, [])
    var verdicts: [String: String] = [:]
    for event in trace.ofPhase("i") where event["cat"] as? String == "check" {
      let args = TraceValidation.args(event)
      if let label = args["label"] as? String {
        verdicts[String(label.prefix(1))] = args["verdict"] as? String
      }
    }
    return (verdicts, url)
  }
}
