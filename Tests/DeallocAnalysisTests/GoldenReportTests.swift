import DeallocAnalysis
import DeallocLog
import Testing

/// Every fixture through every renderer this module owns, against `fixtures/expected/`.
/// Re-record with `DEALLOCTRACE_RECORD_GOLDEN=1 swift test --filter GoldenReportTests`.
@Suite struct GoldenReportTests {
  static let fixtures = [
    "feed", "address-reuse", "several-sessions", "truncated-tail", "garbage-lines",
    "survivor-late", "stalled-queue", "unknown-kinds", "hostile-names",
    // Recorded by the real recorder: `DEALLOCTRACE_LOG=… FeedDemo` (make demo).
    "recorded-feed-demo",
    // Recorded by the holders recorder (branch holders-rec, 2026-12-01): TraceProbe's holder
    // scenarios with DEALLOCTRACE_HOLDERS=1, one session each (see HolderGoldenTests).
    "recorded-holders",
  ]

  @Test(arguments: fixtures)
  func reportMatchesGoldenFiles(_ name: String) throws {
    let report = try Fixtures.report(["\(name).jsonl"])
    try Fixtures.assertGolden(TextRenderer().render(report), "\(name).txt")
    try Fixtures.assertGolden(JSONRenderer().render(report), "\(name).json")
    try Fixtures.assertGolden(MarkdownRenderer().render(report), "\(name).md")
  }

  @Test(arguments: [
    ("feed", "1"), ("feed", "Feed.NodeCell"), ("feed", "ImageCache"),
    ("address-reuse", "0x7f0000001000"), ("survivor-late", "Held"),
    ("recorded-feed-demo", "FeedDemo.ProfileViewModel"),
    ("recorded-holders", "TraceProbe.CapturingModel"),
  ])
  func explainMatchesGoldenFiles(_ name: String, _ target: String) throws {
    var collector = ObjectHistoryCollector(ObjectSelector(target))
    var reader = LogReader()
    try reader.read([Fixtures.input("\(name).jsonl")], into: &collector)
    let text = ExplainRenderer().render(
      collector.histories, selector: collector.selector, omitted: collector.omitted)
    try Fixtures.assertGolden(text, "explain-\(name)-\(target).txt")
  }

  @Test func severalInputsAreOneReport() throws {
    let report = try Fixtures.report(["feed.jsonl", "several-sessions.jsonl"])
    #expect(report.summary.sessions == 3)
    #expect(
      report.sessions.map(\.file) == [
        "fixtures/feed.jsonl", "fixtures/several-sessions.jsonl", "fixtures/several-sessions.jsonl",
      ])
    try Fixtures.assertGolden(JSONRenderer().render(report), "feed+several-sessions.json")
  }
}
