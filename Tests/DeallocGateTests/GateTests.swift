import DeallocAnalysis
import Testing

@Suite struct GateTests {
  typealias Threshold = GateThresholds.Threshold

  func counts(_ result: GateResult) -> [Threshold: Int] {
    Dictionary(uniqueKeysWithValues: result.thresholds.map { ($0.threshold, $0.count) })
  }

  @Test func cleanLogPassesEveryDefaultThreshold() throws {
    let result = Gate().evaluate(try GateFixtures.report("clean.jsonl"))
    #expect(result.passed)
    #expect(result.thresholds.map(\.count) == [0, 0, 0, 0])
    #expect(result.report.summary.falseLeaks == 1)
  }

  @Test func withoutSuppressionsTheCountsAreTheSummary() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let result = Gate().evaluate(report)
    #expect(
      counts(result) == [
        .leaked: report.summary.leaked, .stuck: report.summary.stuck,
        .trueLeaks: report.summary.trueLeaks, .neverReleased: report.summary.neverReleased,
      ])
    #expect(counts(result) == [.leaked: 3, .stuck: 0, .trueLeaks: 1, .neverReleased: 3])
  }

  @Test func defaultsFailLeaksAndTrueLeaksButNotNeverReleased() throws {
    let result = Gate().evaluate(try GateFixtures.report("leaks.jsonl"))
    #expect(!result.passed)
    #expect(result.failedThresholds.map(\.threshold) == [.leaked, .trueLeaks])
    #expect(result.result(.leaked).exceededBy == 3)
    #expect(result.result(.trueLeaks).exceededBy == 1)
    #expect(result.result(.neverReleased).limit == nil)
    #expect(result.result(.neverReleased).passed)
    #expect(result.result(.leaked).sentence == "3 leaked objects, 3 over --max-leaked 0")
  }

  @Test func maxLeakedIsExceededOnlyAboveItsLimit() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let atLimit = Gate(thresholds: GateThresholds(maxLeaked: 3, maxTrueLeaks: 1)).evaluate(report)
    #expect(atLimit.passed)
    let under = Gate(thresholds: GateThresholds(maxLeaked: 2, maxTrueLeaks: 1)).evaluate(report)
    #expect(under.failedThresholds.map(\.threshold) == [.leaked])
    #expect(under.result(.leaked).exceededBy == 1)
  }

  @Test func maxTrueLeaksCountsChecksOutsideQueues() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let result = Gate(thresholds: GateThresholds(maxLeaked: nil, maxTrueLeaks: 0)).evaluate(report)
    #expect(result.failedThresholds.map(\.threshold) == [.trueLeaks])
    // The false leak (a NodeCell checked while queued) is not counted.
    #expect(result.result(.trueLeaks).count == 1)
    #expect(report.summary.falseLeaks == 1)
  }

  @Test func maxNeverReleasedIsUnlimitedUntilSet() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let unlimited = GateThresholds(maxLeaked: nil, maxTrueLeaks: nil)
    #expect(Gate(thresholds: unlimited).evaluate(report).passed)
    var limited = unlimited
    limited[.neverReleased] = 1
    let result = Gate(thresholds: limited).evaluate(report)
    #expect(result.failedThresholds.map(\.threshold) == [.neverReleased])
    #expect(result.result(.neverReleased).exceededBy == 2)
  }

  @Test func maxStuckCountsOldObjectsOfUnfinishedSessions() throws {
    let stuck = Gate().evaluate(try GateFixtures.report("stalled.jsonl"))
    #expect(stuck.failedThresholds.map(\.threshold) == [.stuck])
    #expect(stuck.result(.stuck).count == 2)
    #expect(
      Gate(thresholds: GateThresholds(maxStuck: 2)).evaluate(
        try GateFixtures.report("stalled.jsonl")
      ).passed)
  }

  @Test func stuckAfterDecidesWhatIsStuck() throws {
    let patient = try GateFixtures.report(
      "stalled.jsonl", options: AnalysisOptions(stuckAfter: 5_000_000_000))
    let result = Gate().evaluate(patient)
    #expect(result.passed)
    #expect(result.result(.stuck).count == 0)
    #expect(patient.summary.pending == 2)
  }

  @Test func suppressionsSetFindingsAsideWithTheirReasonAndListTheUnused() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(report)
    #expect(counts(result) == [.leaked: 2, .stuck: 0, .trueLeaks: 1, .neverReleased: 1])
    #expect(result.result(.leaked).suppressed == 1)
    #expect(result.result(.neverReleased).suppressed == 2)

    let suppressed = result.suppressed.map {
      ($0.finding.signature.type, $0.suppressedBy!.line, $0.suppressedBy!.reason)
    }
    #expect(suppressed.count == 2)
    #expect(
      suppressed[0]
        == (
          "ThirdPartySDK.SessionToken", 5, "the SDK caches its session on purpose (ticket FEED-812)"
        ))
    #expect(
      suppressed[1] == ("Feed.ImageDecoder", 4, "decoder pool keeps two decoders for the whole run")
    )

    #expect(result.unusedSuppressions.map(\.pattern) == ["type:Feed.LegacyCache"])
    #expect(result.unusedSuppressions.map(\.line) == [6])
  }

  @Test func everyMatchingSuppressionIsUsedButTheFirstIsShown() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let list = try SuppressionList.parse(
      "type:Feed.Image*  first\ntype:*Decoder  second\ntype:Nothing.*  unused\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(report)
    let decoder = try #require(
      result.findings.first { $0.finding.signature.type == "Feed.ImageDecoder" })
    #expect(decoder.suppressedBy?.reason == "first")
    #expect(result.unusedSuppressions.map(\.reason) == ["unused"])
  }

  @Test func suppressingEveryFailingFindingPasses() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let list = try SuppressionList.parse(
      "type:Feed.FeedViewModel  known\ntype:ThirdPartySDK.*  sdk\ntype:Feed.ImageCache  cache\n",
      file: "s.txt")
    let result = Gate(suppressions: list).evaluate(report)
    #expect(result.passed)
    #expect(result.counted.allSatisfy { $0.finding.kind == .neverReleased && !$0.failing })
  }

  @Test func failingFindingsComeFirstAndAreMarked() throws {
    let result = Gate().evaluate(try GateFixtures.report("leaks.jsonl"))
    let kinds = result.counted.map { ($0.finding.kind, $0.failing) }
    #expect(kinds.prefix(3).allSatisfy { $0.1 })
    #expect(kinds.dropFirst(3).allSatisfy { !$0.1 && $0.0 == .neverReleased })
  }
}
