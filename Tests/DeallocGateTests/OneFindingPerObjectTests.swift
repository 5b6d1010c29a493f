import DeallocAnalysis
import DeallocLog
import Foundation
import GateInvariants
import Testing

/// An object the queue released, that survived its release and that leak checks then saw
/// alive, is one bug: one `leaked` finding that holds the checks (issue 28, item 2), not a
/// `leaked` finding and a `trueLeak` finding. Checks of an object freed later (late) or
/// never enqueued stay true-leak findings.
@Suite struct OneFindingPerObjectTests {
  /// Two sessions (two test processes) leak `Feed.Held` the same way, each checked alive
  /// after the release (twice in the first); `Feed.Late` is checked alive after its release
  /// and freed later; `Feed.Unqueued` is checked but never enqueued.
  static let log =
    [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/b/FeedTests","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0x600000e01000","type":"Feed.Held","q":"shared","tid":7,"depth":1}"#,
      #"{"ev":"enqueue","t":1100,"id":2,"obj":"0x600000e02000","type":"Feed.Late","q":"shared","tid":7,"depth":2}"#,
      #"{"ev":"release","t":2000,"id":1,"tid":9,"freed":false,"rc":2}"#,
      #"{"ev":"release","t":2100,"id":2,"tid":9,"freed":false,"rc":2}"#,
      #"{"ev":"check","t":3000,"obj":"0x600000e01000","type":"Feed.Held","alive":true,"label":"FeedTests.testHeld","id":1,"tid":7}"#,
      #"{"ev":"check","t":3100,"obj":"0x600000e01000","type":"Feed.Held","alive":true,"label":"FeedTests.testHeldAgain","id":1,"tid":7}"#,
      #"{"ev":"check","t":3200,"obj":"0x600000e02000","type":"Feed.Late","alive":true,"label":"FeedTests.testLate","id":2,"tid":7}"#,
      #"{"ev":"check","t":3300,"obj":"0x600000e09000","type":"Feed.Unqueued","alive":true,"label":"FeedTests.testUnqueued","tid":7}"#,
      #"{"ev":"dealloc","t":4000,"id":2,"tid":7}"#,
      #"{"ev":"end","t":10000,"why":"exit","pending":0,"lost":0}"#,
      #"{"ev":"session","v":1,"t":0,"pid":8,"exe":"/b/FeedPackageTests","wall":"2026-11-29T19:01:00Z","delay_ms":100,"frames":8}"#,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0x600000f01000","type":"Feed.Held","q":"shared","tid":7,"depth":1}"#,
      #"{"ev":"release","t":2000,"id":1,"tid":9,"freed":false,"rc":2}"#,
      #"{"ev":"check","t":3000,"obj":"0x600000f01000","type":"Feed.Held","alive":true,"label":"heldFeed()","id":1,"tid":7}"#,
      #"{"ev":"end","t":10000,"why":"exit","pending":0,"lost":0}"#,
    ].joined(separator: "\n") + "\n"

  static func report() throws -> Report {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-one-finding-\(UUID().uuidString).jsonl").path
    try Data(log.utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try DeallocAnalysis.analyze([path])
  }

  @Test func aReleasedObjectCheckedAliveIsOneLeakedFinding() throws {
    let report = try Self.report()
    let held = report.findings.filter { $0.signature.type == "Feed.Held" }
    #expect(held.map(\.kind) == [.leaked], "\(held.map(\.kind))")
    let finding = try #require(held.first)
    // Both processes' objects, and all three checks, in the one finding.
    #expect(finding.count == 2)
    #expect(finding.checks == 3)
    #expect(finding.examples.map(\.session) == [0, 1])
    #expect(finding.examples.map(\.checkLabel) == ["FeedTests.testHeld", "heldFeed()"])
    #expect(
      finding.explanation.contains(
        "3 leak checks (the first: 'FeedTests.testHeld') also saw them alive after the release"),
      "\(finding.explanation)")
    // The others stay true leaks.
    #expect(
      report.findings.filter { $0.kind == .trueLeak }.map(\.signature.type).sorted()
        == ["Feed.Late", "Feed.Unqueued"])
    // Objects and checks counted apart from the bugs.
    #expect(report.summary.leaked == 2)
    #expect(report.summary.trueLeaks == 5)
    #expect(report.summary.trueLeaksOfLeaked == 3)
    #expect(report.findings.count == 3)
  }

  @Test func everyOutputShowsTheMergedFindingOnce() throws {
    let report = try Self.report()
    let id = try #require(report.findings.first { $0.signature.type == "Feed.Held" }).id.hex
    let result = Gate().evaluate(report)
    #expect(GateInvariants.violations(result).isEmpty, "\(GateInvariants.violations(result))")
    #expect(result.thresholds.first { $0.threshold == .leaked }?.count == 2)
    #expect(result.thresholds.first { $0.threshold == .trueLeaks }?.count == 2)
    let outputs: [(String, String)] = [
      ("text", TextRenderer().render(report)),
      ("markdown", MarkdownRenderer().render(report)),
      ("json", JSONRenderer().render(report)),
      ("gate text", GateTextRenderer().render(result)),
      ("gate markdown", GateMarkdownRenderer().render(result)),
      ("gate json", GateJSONRenderer().render(result)),
    ]
    for (name, output) in outputs {
      #expect(output.contains("3 findings (bugs)") || name.contains("json"), "\(name)")
      // The gate's Markdown lists no counted finding (the step summary shows the report's).
      guard name != "gate markdown" else { continue }
      #expect(output.contains(id), "\(name) lacks \(id)")
      #expect(output.contains("also saw them alive after the release"), "\(name)")
    }
    let json = JSONRenderer().render(report)
    #expect(json.contains("\"checks\": 3"), "\(json)")
    #expect(json.contains("\"trueLeaksOfLeaked\": 3"))
  }

  /// A baseline written before the merge recorded the leak twice: its `leaked` id (1 object
  /// per run then) and its `trueLeak` id. The merged finding keeps the `leaked` id, so the
  /// old baseline still covers it and the gate passes.
  @Test func aBaselineWrittenBeforeTheMergeStillCoversTheMergedFinding() throws {
    let report = try Self.report()
    func entry(_ kind: Finding.Kind, _ type: String, _ count: Int) -> FindingDigest {
      FindingDigest(
        id: FindingID(kind: kind, type: type, symbols: []), kind: kind, type: type, count: count,
        frames: [])
    }
    let old = Baseline(
      entries: [
        entry(.leaked, "Feed.Held", 2), entry(.trueLeak, "Feed.Held", 3),
        entry(.trueLeak, "Feed.Late", 1), entry(.trueLeak, "Feed.Unqueued", 1),
      ], path: "old.json")
    let read = try Baseline.parse(old.serialized(), path: "old.json")
    let result = Gate(baseline: read).evaluate(report)
    #expect(result.passed, "\(GateTextRenderer().render(result))")
    #expect(result.counted.isEmpty)
    #expect(
      result.fixedBaselineEntries.map(\.id)
        == [FindingID(kind: .trueLeak, type: "Feed.Held", symbols: [])])
  }
}
