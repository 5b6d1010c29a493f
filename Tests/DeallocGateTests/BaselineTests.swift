import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// The baseline: what it records, how the gate judges a report against it (new, known,
/// grown, fixed; thresholds on what it does not cover), and how it reads its file.
@Suite struct BaselineTests {
  func report() throws -> Report { try GateFixtures.report("leaks.jsonl") }

  func finding(_ report: Report, _ type: String) throws -> Finding {
    try #require(report.findings.first { $0.signature.type == type })
  }

  @Test func aBaselineOfARunCoversThatRunEntirely() throws {
    let report = try report()
    let recorded = Baseline(recording: Gate().evaluate(report), path: "b.json")
    #expect(recorded.entries.count == report.findings.count)
    let result = Gate(baseline: recorded).evaluate(report)
    #expect(result.passed)
    #expect(result.counted.isEmpty)
    #expect(result.known.count == report.findings.count)
    #expect(result.fixedBaselineEntries.isEmpty)
    #expect(result.result(.leaked).known == 3)
    #expect(result.result(.leaked).count == 0)
  }

  @Test func suppressedMembersStayOutOfTheBaseline() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(try report())
    let recorded = Baseline(recording: result, path: "b.json")
    #expect(!recorded.entries.contains { $0.type == "ThirdPartySDK.SessionToken" })
    #expect(!recorded.entries.contains { $0.type == "Feed.ImageDecoder" })
    #expect(
      recorded.entries.map(\.kind) == [
        .finding(.leaked), .finding(.trueLeak), .finding(.neverReleased),
      ])
  }

  @Test func onlyNewAndGrownFindingsCountAndFixedEntriesAreListed() throws {
    let report = try report()
    let viewModel = try finding(report, "Feed.FeedViewModel")
    let cache = try finding(report, "Feed.ImageCache")
    let gone = FindingDigest(
      id: FindingID(kind: .leaked, type: "Feed.Gone", symbols: []), kind: .leaked,
      type: "Feed.Gone", count: 4, frames: [])
    let baseline = Baseline(
      entries: [
        FindingDigest(viewModel).with(count: 1), FindingDigest(cache), gone,
      ], path: "b.json")
    let result = Gate(baseline: baseline).evaluate(report)
    // The view model grew from 1 to 2: one over --max-leaked 0; the SDK token is new.
    #expect(result.result(.leaked).count == 2)
    #expect(result.result(.leaked).known == 1)
    #expect(result.result(.trueLeaks).count == 0)
    #expect(result.failedThresholds.map(\.threshold) == [.leaked])
    let statuses = Dictionary(
      uniqueKeysWithValues: result.findings.map { ($0.finding.signature.type, $0.baseline) })
    #expect(statuses["Feed.FeedViewModel"] == .grown(baselineCount: 1))
    #expect(statuses["Feed.ImageCache"] == .known(baselineCount: 1))
    #expect(statuses["ThirdPartySDK.SessionToken"] == .new)
    #expect(result.fixedBaselineEntries == [gone])
    #expect(result.counted.map(\.finding.signature.type).contains("Feed.FeedViewModel"))
    #expect(result.known.map(\.finding.signature.type) == ["Feed.ImageCache"])
  }

  @Test func thresholdsApplyToWhatTheBaselineDoesNotCover() throws {
    let report = try report()
    let baseline = Baseline(
      entries: [FindingDigest(try finding(report, "Feed.FeedViewModel"))], path: "b.json")
    // Two leaks known, the SDK token (1) is new: --max-leaked 1 holds, 0 does not.
    let lenient = GateThresholds(maxLeaked: 1, maxTrueLeaks: nil)
    #expect(Gate(thresholds: lenient, baseline: baseline).evaluate(report).passed)
    let strict = GateThresholds(maxLeaked: 0, maxTrueLeaks: nil)
    #expect(!Gate(thresholds: strict, baseline: baseline).evaluate(report).passed)
  }

  @Test func aShrunkFindingIsKnownAndSaysItsBaselineCount() throws {
    let report = try report()
    let baseline = Baseline(
      entries: [FindingDigest(try finding(report, "Feed.FeedViewModel")).with(count: 5)],
      path: "b.json")
    let result = Gate(
      thresholds: GateThresholds(maxLeaked: nil, maxTrueLeaks: nil), baseline: baseline
    )
    .evaluate(report)
    let known = try #require(result.known.first)
    #expect(known.baseline == .known(baselineCount: 5))
    #expect(GateTextRenderer().render(result).contains("(×2, baseline ×5) id:\(known.finding.id)"))
  }

  @Test func theFileReadsBackAsWrittenSortedAndStable() throws {
    let result = Gate().evaluate(try report())
    let recorded = Baseline(recording: result, path: "b.json")
    let text = recorded.serialized()
    let again = try Baseline.parse(text, path: "b.json")
    #expect(again == recorded)
    #expect(again.serialized() == text)
    // Recording in another order writes the same bytes.
    let shuffled = Baseline(entries: recorded.entries.reversed(), path: "b.json")
    #expect(shuffled.serialized() == text)
    #expect(
      text.hasPrefix(
        "{\n  \"baselineVersion\": 1,\n  \"idRule\": \(FindingID.rule),\n  \"findings\": [\n"))
  }

  @Test func findingsSharingAnIDShareOneEntryWithTheirTotal() {
    let id = FindingID(kind: .leaked, type: "T", symbols: ["libx.so"])
    let entries = FindingDigest.combined([
      FindingDigest(id: id, kind: .leaked, type: "T", count: 2, frames: ["libx.so+0x10"]),
      FindingDigest(id: id, kind: .leaked, type: "T", count: 3, frames: ["libx.so+0x90"]),
    ])
    #expect(entries.count == 1)
    #expect(entries.first?.count == 5)
  }

  static let badFiles: [(String, String)] = [
    (
      "{\n  \"baselineVersion\": 1,\n  \"findings\": [\n    {\"id\": \"x\",}\n",
      "b.json:4: not a dealloctrace baseline: expected a key in double quotes"
    ),
    ("[]", "b.json: not a dealloctrace baseline: not a JSON object"),
    ("{\"findings\": []}", "b.json: not a dealloctrace baseline: no integer 'baselineVersion'"),
    (
      "{\"baselineVersion\": 1, \"findings\": [{\"id\": \"abc\", \"kind\": \"leaked\", \"type\": \"T\", \"count\": 1}]}",
      "b.json: not a dealloctrace baseline: findings[0].id: expected 12 hex digits"
    ),
    (
      "{\"baselineVersion\": 1, \"findings\": [{\"id\": \"0123456789ab\", \"kind\": \"leak\\u001b[31m\", \"type\": \"T\", \"count\": 1}]}",
      "b.json: not a dealloctrace baseline: findings[0].kind: expected one of leaked, trueLeak, stuck, neverReleased"
    ),
    (
      "{\"baselineVersion\": 2, \"findings\": []}",
      "b.json: baseline version 2 is newer than this dealloctrace reads (1); upgrade dealloctrace"
    ),
    (
      "{\"baselineVersion\": 1, \"findings\": [], \"x\": \"\u{1}\"}",
      "b.json:1: not a dealloctrace baseline: a control character inside a string"
    ),
  ]

  @Test(arguments: badFiles)
  func aBadFileIsOneLineNamingTheFile(_ text: String, _ message: String) {
    #expect {
      try Baseline.parse(text, path: "b.json")
    } throws: { error in
      let description = (error as? AnalysisError)?.description ?? ""
      return description.hasPrefix(message) && !description.contains("\n")
        && !description.unicodeScalars.contains { $0.value < 0x20 }
    }
  }

  @Test func knownFindingsAreNoticesCappedAsGitHubShowsThem() throws {
    let path = try writeManyLeaksLog(count: 12)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let report = try DeallocAnalysis.analyze([path])
    let baseline = Baseline(recording: Gate().evaluate(report), path: "b.json")
    let annotations = GitHubRenderer().annotations(Gate(baseline: baseline).evaluate(report))
    #expect(annotations.allSatisfy { $0.level == .notice })
    #expect(annotations.count == GitHubRenderer.annotationLimit)
    #expect(annotations.dropLast().allSatisfy { $0.title.hasPrefix("dealloctrace: known: ") })
    #expect(annotations.last?.message.hasPrefix("3 notices not annotated") == true)
  }

  @Test func aMissingBaselineSaysSo() {
    #expect(
      throws: AnalysisError.baselineUnreadable(path: "/nonexistent/b.json", reason: "no such file")
    ) {
      try Baseline.load(path: "/nonexistent/b.json")
    }
  }
}

extension FindingDigest {
  func with(count: Int) -> FindingDigest {
    var copy = self
    copy.count = count
    return copy
  }
}
