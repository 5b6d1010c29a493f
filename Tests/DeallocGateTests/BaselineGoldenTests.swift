import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// Golden outputs of the baseline and the diff: the baseline file, the gate judged against
/// `fixtures/gate/old-baseline.json` in every format, and the diff of `leaks.jsonl` (base)
/// against `leaks-head.jsonl` (head) in every format.
///
/// The old baseline makes each case appear once: the view model grew (1 → 2), the image
/// cache is known, the SDK token and the other findings are new, and `Feed.LoginController`
/// is fixed.
@Suite struct BaselineGoldenTests {
  static let baselinePath = "fixtures/gate/old-baseline.json"

  func judged(symbolizer: (any FrameSymbolizer)? = nil) throws -> GateResult {
    var baseline = try Baseline.load(path: GateFixtures.path("old-baseline.json"))
    baseline.path = Self.baselinePath
    return Gate(baseline: baseline).evaluate(
      try GateFixtures.report("leaks.jsonl", symbolizer: symbolizer))
  }

  @Test func goldenBaselineFile() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    try GateFixtures.assertGolden(
      Baseline(recording: result, path: "b.json").serialized(), "leaks.baseline.json")
  }

  @Test func goldenVerdictsAgainstABaseline() throws {
    let result = try judged()
    try GateFixtures.assertGolden(GateTextRenderer().render(result), "baseline.txt")
    try GateFixtures.assertGolden(GateJSONRenderer().render(result), "baseline.json")
    try GateFixtures.assertGolden(GateMarkdownRenderer().render(result), "baseline.md")
    let symbolized = try judged(symbolizer: FixtureSymbolizer())
    var junit = JUnitRenderer()
    junit.workspace = WorkspacePaths(root: "/ci/work/feed")
    try GateFixtures.assertGolden(junit.render(symbolized), "baseline.junit.xml")
    try GateFixtures.assertGolden(
      GitHubRenderer(workspace: "/ci/work/feed").render(symbolized), "baseline.github.txt")
  }

  @Test func theVerdictNamesExactlyTheNewGrownKnownAndFixed() throws {
    let result = try judged()
    #expect(!result.passed)
    let byType = Dictionary(
      uniqueKeysWithValues: result.findings.map { ($0.finding.signature.type, $0.baseline) })
    #expect(byType["Feed.FeedViewModel"] == .grown(baselineCount: 1))
    #expect(byType["Feed.ImageCache"] == .known(baselineCount: 1))
    #expect(byType["ThirdPartySDK.SessionToken"] == .new)
    #expect(result.fixedBaselineEntries.map(\.type) == ["Feed.LoginController"])
    // JUnit: the failing new and grown leaks are failures, the known one is skipped.
    let suite = try #require(
      try ParsedElement.parse(JUnitRenderer().render(result)).child("testsuite"))
    let skipped = suite.children("testcase").filter { $0.child("skipped") != nil }
    #expect(
      skipped.compactMap { $0["name"] }.map { $0.hasPrefix("Feed.ImageCache [id:") } == [true])
    let failed = suite.children("testcase").filter {
      $0.child("failure") != nil && $0["classname"] == "dealloctrace.leaked"
    }
    #expect(failed.count == 2)
    // GitHub: errors for what counts, notices for the known finding and the fixed entry.
    let annotations = GitHubRenderer().annotations(result)
    #expect(
      annotations.filter { $0.level == .notice }.map(\.title) == [
        "dealloctrace: known: true leak: Feed.ImageCache (×1) [id:60ae43d0f1c9]",
        "dealloctrace: fixed, remove from the baseline [id:42f2ad6c272e]",
      ])
    #expect(annotations.filter { $0.level == .error }.count == 3)
  }

  func diff() throws -> FindingsDiff {
    FindingsDiff(
      base: DiffSide(try GateFixtures.report("leaks.jsonl")),
      head: DiffSide(try GateFixtures.report("leaks-head.jsonl")))
  }

  @Test func goldenDiffs() throws {
    let diff = try diff()
    try GateFixtures.assertGolden(DiffTextRenderer().render(diff), "diff.txt")
    try GateFixtures.assertGolden(DiffMarkdownRenderer().render(diff), "diff.md")
    try GateFixtures.assertGolden(DiffJSONRenderer().render(diff), "diff.json")
  }

  @Test func theDiffFindsNewGoneChangedAndFalseLeaks() throws {
    let diff = try diff()
    #expect(diff.hasNewFindings)
    #expect(diff.new.map(\.type) == ["Feed.ProfileViewModel"])
    #expect(diff.gone.map(\.type) == ["ThirdPartySDK.SessionToken"])
    #expect(diff.changed.map { [$0.base.count, $0.head.count] } == [[2, 3]])
    #expect(diff.falseLeaksAppeared.map(\.key.label) == ["FeedTests.testCellReuse"])
    #expect(diff.falseLeaksDisappeared.map(\.key.label) == ["FeedTests.testCells"])
    let same = FindingsDiff(base: diff.head, head: diff.head)
    #expect(!same.hasNewFindings && same.gone.isEmpty && same.changed.isEmpty)
  }

  @Test func aSavedReportIsTheSameSideAsItsLogs() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let saved = try DiffSide.parseSavedReport(JSONRenderer().render(report), path: "base.json")
    let logs = DiffSide(report)
    #expect(saved.findings == logs.findings)
    #expect(saved.falseLeaks == logs.falseLeaks)
    #expect(saved.isSavedReport && !logs.isSavedReport)
  }

  @Test func aReportSavedBeforeIDsGetsTheSameIDs() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    var text = JSONRenderer().render(report)
    // Remove every finding's "id" member, as a report of an older version lacks it.
    text = text.split(separator: "\n", omittingEmptySubsequences: false)
      .filter { !$0.hasPrefix("      \"id\": \"") }.joined(separator: "\n")
    #expect(!text.contains(report.findings[0].id.hex))
    let saved = try DiffSide.parseSavedReport(text, path: "old.json")
    #expect(saved.findings == DiffSide(report).findings)
  }

  @Test(arguments: [
    (
      "{\"reportVersion\": 2, \"findings\": []}",
      "r.json: not a dealloctrace JSON report: report version 2 is newer"
    ),
    ("{\"reportVersion\": 1}", "r.json: not a dealloctrace JSON report: no 'findings' array"),
    (
      "{\"reportVersion\": 1,\n \"findings\": [}",
      "r.json:2: not a dealloctrace JSON report: unexpected character"
    ),
  ])
  func aBadSavedReportIsOneLine(_ text: String, _ message: String) {
    #expect {
      try DiffSide.parseSavedReport(text, path: "r.json")
    } throws: { error in
      ((error as? AnalysisError)?.description ?? "").hasPrefix(message)
    }
  }

  @Test func hostileNamesStayInsideTheirMarkup() throws {
    let hostile = DiffSide(try GateFixtures.report("hostile.jsonl"))
    let diff = FindingsDiff(
      base: DiffSide(inputs: ["b"], isSavedReport: false, findings: [], falseLeaks: [:]),
      head: hostile)
    #expect(!diff.new.isEmpty)
    let text = DiffTextRenderer().render(diff)
    for line in text.split(separator: "\n") {
      #expect(!line.hasPrefix("::"))
      #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
    }
    let markdown = DiffMarkdownRenderer().render(diff)
    for line in markdown.split(separator: "\n") where line.hasPrefix("| `") {
      // Every table row keeps its four cells: no name adds a pipe or a line break.
      #expect(line.filter { $0 == "|" }.count == 5, "\(line)")
    }
    let json = DiffJSONRenderer().render(diff)
    #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) is [String: Any])
  }
}
