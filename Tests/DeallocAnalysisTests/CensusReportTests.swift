import Foundation
import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The `census` record (issue 27): read by DeallocLog, shown as "Leaks in the whole
/// process" in every report, the JSON report's `census`, and `check`'s
/// `--max-process-leaks`, which never counts the libraries' leaks (issue 36).
@Suite struct CensusReportTests {
  static let session =
    #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/app/Shop","wall":"W","delay_ms":100,"frames":0}"#
  /// A checkpoint with one leak, then the exit census: one program cycle, one library
  /// cycle, one delayed object.
  static let checkpoint =
    #"{"ev":"census","t":10,"tid":7,"label":"mid","objects":20,"bytes":900,"leaked":1,"leaked_bytes":32,"library_leaked":0,"library_leaked_bytes":0,"delayed_objects":0,"groups":[{"id":"000000000001","kind":"leak","instances":1,"count":1,"bytes":32,"members":[{"type":"Shop.Lone","count":1,"bytes":32}],"edges":[],"tree":[{"depth":0,"type":"Shop.Lone","obj":"0x1000","size":32,"count":1,"bytes":32}]}],"delayed":[],"live":[{"type":"Shop.Lone","count":1,"bytes":32}],"threads_stopped":1,"threads_unstopped":0,"census_us":900}"#
  static let exit =
    #"{"ev":"census","t":20,"tid":7,"label":"exit","objects":30,"bytes":1200,"leaked":2,"leaked_bytes":80,"library_leaked":1,"library_leaked_bytes":136,"delayed_objects":1,"groups":[{"id":"fb73afc9ad01","kind":"cycle","instances":1,"count":2,"bytes":80,"members":[{"type":"Shop.Order","count":1,"bytes":40},{"type":"Shop.Payment","count":1,"bytes":40}],"edges":[{"type":"Shop.Order","field":"payment"},{"type":"Shop.Payment","field":"order"}],"tree":[{"depth":0,"type":"Shop.Order","obj":"0x2000","size":40,"count":2,"bytes":80},{"depth":1,"type":"Shop.Payment","obj":"0x2100","size":40,"via":"payment","count":1,"bytes":40},{"depth":2,"type":"Shop.Order","obj":"0x2000","size":40,"via":"order","back":true}]},{"id":"0000000000ab","kind":"cycle","instances":1,"count":1,"bytes":136,"library":true,"members":[{"type":"XCTest.XCTestCaseRun","count":1,"bytes":136}],"edges":[{"type":"XCTest.XCTestCaseRun","field":"test"}],"tree":[{"depth":0,"type":"XCTest.XCTestCaseRun","obj":"0x3000","size":136,"count":1,"bytes":136},{"depth":1,"type":"XCTest.XCTestCaseRun","obj":"0x3000","size":136,"via":"test","back":true}]}],"delayed":[{"q":"shared","count":1,"bytes":24,"types":[{"type":"Shop.Slow","count":1,"bytes":24}]}],"live":[{"type":"Shop.Order","count":1,"bytes":40}],"threads_stopped":2,"threads_unstopped":1,"census_us":1500}"#
  static let end = #"{"ev":"end","t":30,"why":"exit","pending":0,"lost":0}"#

  private func report(_ lines: [String], options: AnalysisOptions = AnalysisOptions()) throws
    -> Report
  {
    var reader = LogReader()
    var analyzer = Analyzer(options: options)
    let log = try TemporaryLog(lines)
    try reader.read([LogInput(path: log.path, displayName: "census.jsonl")], into: &analyzer)
    return analyzer.finish(inputs: ["census.jsonl"])
  }

  @Test func theRecordIsRead() throws {
    let report = try report([Self.session, Self.checkpoint, Self.exit, Self.end])
    #expect(report.census.censuses.map(\.label) == ["mid", "exit"])
    let final = try #require(report.census.final)
    #expect(final.groups.map(\.id) == ["fb73afc9ad01", "0000000000ab"])
    #expect(
      final.programGroups.first?.cycleText == "Shop.Order.payment → Shop.Payment.order → Shop.Order"
    )
    #expect(final.libraryGroups.map(\.members.first?.type) == ["XCTest.XCTestCaseRun"])
    #expect(
      final.delayed == [
        CensusQueue(
          queue: "shared", count: 1, bytes: 24,
          types: [CensusTypeCount(type: "Shop.Slow", count: 1, bytes: 24)])
      ])
    #expect(final.tree(0).last?.back == true)
    #expect(report.warnings.isEmpty)
  }

  /// Several processes' sessions (`dealloctrace run -- swift test`): each session's last
  /// census counts, and the one shown is the one with leaks, even when a session without
  /// leaks came last. Before, only the last census read counted.
  @Test func everySessionsLastCensusCounts() throws {
    let clean = Self.checkpoint.replacingOccurrences(
      of: #""label":"mid""#, with: #""label":"exit""#
    )
    .replacingOccurrences(
      of: #""groups":[{"id":"000000000001""#, with: #""groups":[],"x":[{"id":"000000000001""#)
    let mixed = try self.report([
      Self.session, Self.exit, Self.end, Self.session, clean, Self.end,
    ])
    #expect(mixed.census.programLeakGroups == 1)
    #expect(mixed.census.final?.groups.first?.id == "fb73afc9ad01")
    let twice = try self.report([
      Self.session, Self.exit, Self.end, Self.session, Self.exit, Self.end,
    ])
    #expect(twice.census.programLeakGroups == 2)
    let oneSession = try self.report([Self.session, Self.exit, Self.checkpoint, Self.end])
    #expect(oneSession.census.programLeakGroups == 1, "a session's last census alone counts")
    #expect(oneSession.census.final?.label == "mid")
  }

  /// Each session's last census counts, so each one's findings are listed and judged: a
  /// baseline of a two-process run (XCTest's and Swift Testing's, as the plugin runs them)
  /// covers both processes' leaks, and the same leak in both is one finding seen twice.
  /// Before, the gate counted every session's leaks but listed the shown census's only, so
  /// a baseline could never cover the other process's leak.
  @Test func aBaselineCoversTheLeaksOfEverySession() throws {
    let otherLeak = Self.checkpoint.replacingOccurrences(
      of: #""label":"mid""#, with: #""label":"exit""#)
    let twoProcesses = try report([
      Self.session, Self.exit, Self.end, Self.session, otherLeak, Self.end,
    ])
    #expect(twoProcesses.census.programGroups.map(\.id) == ["fb73afc9ad01", "000000000001"])
    let recorded = Baseline(recording: Gate().evaluate(twoProcesses), path: "b.json")
    #expect(recorded.entries.filter(\.isProcess).count == 2)
    let judged = try #require(Gate(baseline: recorded).evaluate(twoProcesses).processLeaks)
    #expect(judged.count == 0)
    #expect(judged.known == 2)
    #expect(judged.passed)

    let sameLeakTwice = try report([
      Self.session, Self.exit, Self.end, Self.session, Self.exit, Self.end,
    ])
    let merged = sameLeakTwice.census.programGroups
    #expect(merged.map(\.id) == ["fb73afc9ad01"])
    #expect(merged.first?.instances == 2)
    #expect(merged.first?.count == 4)
    let gate = try #require(Gate().evaluate(sameLeakTwice).processLeaks)
    #expect(gate.count == 2)
    #expect(gate.groups.count == 1)
  }

  @Test func theTextReportShowsTheLeaksStyleSection() throws {
    let text = TextRenderer().render(
      try report([Self.session, Self.checkpoint, Self.exit, Self.end]))
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let start = try #require(lines.firstIndex(of: "Leaks in the whole process (census \"exit\"):"))
    #expect(
      Array(lines[start...].prefix(12)) == [
        "Leaks in the whole process (census \"exit\"):",
        "    2 leaks for 80 total leaked bytes among 30 live Swift objects (census: 1500 us).",
        "    2 (80 bytes) ROOT CYCLE: <Shop.Order 0x2000> [40]",
        "       1 (40 bytes) payment --> <Shop.Payment 0x2100> [40]",
        "          order --> CYCLE BACK TO <Shop.Order 0x2000> [40]",
        "    cycle: Shop.Order.payment → Shop.Payment.order → Shop.Order; id fb73afc9ad01",
        "  Library leaks (the toolchain's own, never counted by the gate): 1 object, 136 bytes.",
        "    XCTest: 1 group, 1 object, 136 bytes.",
        "    1 (136 bytes) ROOT CYCLE: <XCTest.XCTestCaseRun 0x3000> [136]",
        "       test --> CYCLE BACK TO <XCTest.XCTestCaseRun 0x3000> [136]",
        "    cycle: XCTest.XCTestCaseRun.test → XCTest.XCTestCaseRun; id 0000000000ab",
        "  Delayed, not leaked: 1 object waiting in queue 'shared' (Shop.Slow ×1).",
      ])
    #expect(text.contains("  Checkpoints: \"mid\" 1 leak (32 bytes, 20 live)."))
    let markdown = MarkdownRenderer().render(try report([Self.session, Self.exit, Self.end]))
    #expect(markdown.contains("## Leaks in the whole process\n\n```\n"))
    let html = HTMLRenderer().render(try report([Self.session, Self.exit, Self.end]))
    #expect(html.contains("<section id=\"process-leaks\">"))
  }

  @Test func theJSONReportHasACensusObject() throws {
    let json = JSONRenderer().render(
      try report([Self.session, Self.checkpoint, Self.exit, Self.end]))
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let census = try #require(document["census"] as? [String: Any])
    let leaks = try #require(census["leaks"] as? [[String: Any]])
    #expect(leaks.map { $0["id"] as? String } == ["fb73afc9ad01"])
    #expect(leaks.first?["kind"] as? String == "cycle")
    let members = leaks.first?["members"] as? [[String: Any]] ?? []
    #expect(members.map { $0["type"] as? String } == ["Shop.Order", "Shop.Payment"])
    let edges = leaks.first?["edges"] as? [[String: Any]] ?? []
    #expect(edges.map { $0["field"] as? String } == ["payment", "order"])
    #expect((census["libraryLeaks"] as? [Any])?.count == 1)
    #expect((census["delayed"] as? [[String: Any]])?.first?["queue"] as? String == "shared")
    let checkpoints = census["checkpoints"] as? [[String: Any]] ?? []
    #expect(checkpoints.map { $0["label"] as? String } == ["mid", "exit"])
    // A log without a census keeps the report's shape.
    let plain = JSONRenderer().render(try report([Self.session, Self.end]))
    #expect(!plain.contains("\"census\""))
  }

  @Test func theGateCountsTheProgramsLeakGroupsNotTheLibraries() throws {
    let report = try report([Self.session, Self.checkpoint, Self.exit, Self.end])
    let failing = Gate().evaluate(report)
    #expect(!failing.passed)
    #expect(failing.processLeaks?.count == 1)
    #expect(failing.processLeaks?.library == 1)
    #expect(
      GateTextRenderer().render(failing).contains(
        "FAIL  --max-process-leaks  1 process leak (max 0); 1 library leak not counted"))
    var thresholds = GateThresholds()
    thresholds.maxProcessLeaks = 1
    #expect(Gate(thresholds: thresholds).evaluate(report).passed)
    // Only the library's leak: the gate passes at its default.
    let libraryOnly = Self.exit.replacing(
      #""kind":"cycle","instances":1,"count":2,"bytes":80,"members""#,
      with: #""kind":"cycle","instances":1,"count":2,"bytes":80,"library":true,"members""#)
    #expect(Gate().evaluate(try self.report([Self.session, libraryOnly, Self.end])).passed)
    // No census, no judgement.
    #expect(Gate().evaluate(try self.report([Self.session, Self.end])).processLeaks == nil)
    // Suppressed by id, or by its root's type glob: set aside, and the suppression is used.
    for line in ["id:fb73afc9ad01 known", "type:Shop.Ord* known"] {
      let list = try SuppressionList.parse(line, file: "s.txt")
      let result = Gate(suppressions: list).evaluate(report)
      #expect(result.passed, "\(line)")
      #expect(result.processLeaks?.suppressed.map(\.id) == ["fb73afc9ad01"])
      #expect(result.unusedSuppressions.isEmpty)
    }
    let unrelated = try SuppressionList.parse("type:Shop.Payment", file: "s.txt")
    #expect(!Gate(suppressions: unrelated).evaluate(report).passed)
  }

  /// A census labelled `label` whose live counts are `live` (type, count).
  static func census(_ label: String, _ t: Int, _ live: [(String, Int)]) -> String {
    let entries = live.map { #"{"type":"\#($0.0)","count":\#($0.1),"bytes":\#($0.1 * 16)}"# }
    return
      #"{"ev":"census","t":\#(t),"label":"\#(label)","objects":10,"groups":[],"delayed":[],"live":[\#(entries.joined(separator: ","))]}"#
  }

  @Test func typesGrowingAtEveryCheckpointFailTheGate() throws {
    let report = try report([
      Self.session,
      Self.census(
        "iteration", 1, [("Shop.Cache", 10), ("Swift.__StringStorage", 1), ("Shop.Flat", 3)]),
      Self.census(
        "iteration", 2, [("Shop.Cache", 20), ("Swift.__StringStorage", 2), ("Shop.Flat", 3)]),
      Self.census("other", 3, [("Shop.Flat", 99)]),
      Self.census(
        "iteration", 4, [("Shop.Cache", 35), ("Swift.__StringStorage", 3), ("Shop.Flat", 4)]),
      Self.end,
    ])
    #expect(
      report.census.growing.map(\.text) == [
        "Shop.Cache: 10 → 20 → 35 (+12.5 per \"iteration\")",
        "Swift.__StringStorage: 1 → 2 → 3 (+1 per \"iteration\")",
      ])
    let result = Gate().evaluate(report)
    #expect(!result.passed)
    #expect(result.growingTypes?.types.map(\.type) == ["Shop.Cache"])
    var thresholds = GateThresholds()
    thresholds.maxGrowingTypes = 1
    #expect(Gate(thresholds: thresholds).evaluate(report).passed)
    #expect(
      TextRenderer().render(report).contains(
        "    Shop.Cache: 10 → 20 → 35 (+12.5 per \"iteration\")"))
    // Two checkpoints are not enough to call anything growing.
    let two = try self.report([
      Self.session, Self.census("iteration", 1, [("Shop.Cache", 1)]),
      Self.census("iteration", 2, [("Shop.Cache", 2)]), Self.end,
    ])
    #expect(two.census.growing.isEmpty)
    #expect(Gate().evaluate(two).growingTypes == nil)
  }

  /// `--library` names modules whose growth is listed but not counted, as the toolchain's.
  @Test func aLibrarysGrowingTypeDoesNotFailTheGate() throws {
    let lines = [
      Self.session,
      Self.census("iteration", 1, [("VendorKit.Cache", 10), ("Shop.Flat", 3)]),
      Self.census("iteration", 2, [("VendorKit.Cache", 20), ("Shop.Flat", 3)]),
      Self.census("iteration", 3, [("VendorKit.Cache", 30), ("Shop.Flat", 3)]),
      Self.end,
    ]
    #expect(
      try Gate().evaluate(report(lines)).growingTypes?.types.map(\.type) == ["VendorKit.Cache"])
    var options = AnalysisOptions()
    options.libraryModules = [try Glob("Vendor*")]
    let library = try report(lines, options: options)
    #expect(library.census.growing.map(\.type) == ["VendorKit.Cache"])
    #expect(Gate().evaluate(library).passed)
    #expect(Gate().evaluate(library).growingTypes?.types == [])
  }

  /// The recorder's `growing` member: one new instance of a growing type and what held it,
  /// shown under the type's growth line and in the JSON report's `growing`.
  @Test func theNewestInstanceOfAGrowingTypeShowsItsHolderPath() throws {
    let growing =
      #","growing":[{"type":"Shop.Cache","previous":20,"count":35,"obj":"0x5000","new":true,"holders":{"direct":1,"more":0,"paths":[{"root":{"kind":"global","sym":"Shop.cache","mod":"/app/Shop"},"steps":[{"type":"Swift._ContiguousArrayStorage<Shop.Cache>","obj":"0x4000","off":304,"element":34,"count":35}]}],"scan_us":40}}]}"#
    let last = String(Self.census("iteration", 4, [("Shop.Cache", 35)]).dropLast()) + growing
    let report = try report([
      Self.session, Self.census("iteration", 1, [("Shop.Cache", 10)]),
      Self.census("iteration", 2, [("Shop.Cache", 20)]), last, Self.end,
    ])
    #expect(report.warnings.isEmpty)
    let lines = TextRenderer().render(report).split(separator: "\n").map(String.init)
    let start = try #require(lines.firstIndex { $0.hasPrefix("    Shop.Cache: 10 → 20 → 35") })
    #expect(
      Array(lines[(start + 1)...].prefix(5)) == [
        "      one of the newest (not there at the previous \"iteration\"), at the last one:",
        "        held by (shortest path from a root):",
        "          global Shop.cache  (Shop)",
        "          → [element 34 of 35]  Swift._ContiguousArrayStorage<Shop.Cache>",
        "          → Shop.Cache 0x5000",
      ])
    let json = JSONRenderer().render(report)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let census = try #require(document["census"] as? [String: Any])
    let type = try #require((census["growing"] as? [[String: Any]])?.first)
    let newest = try #require(type["newest"] as? [String: Any])
    #expect(newest["obj"] as? String == "0x5000")
    #expect(newest["new"] as? Bool == true)
    #expect((newest["holders"] as? [String: Any])?["direct"] as? Int == 1)
  }

  @Test func aMalformedCensusIsAWarningNotACrash() throws {
    let report = try report([
      Self.session, #"{"ev":"census","t":5,"label":"x","groups":[{"kind":"leak"}]}"#, Self.end,
    ])
    #expect(report.census.isEmpty)
    #expect(report.warnings.contains { $0.message.contains("census group without 'id'") })
  }
}

extension CensusRecord {
  fileprivate func tree(_ group: Int) -> [CensusTreeLine] { groups[group].tree }
}
