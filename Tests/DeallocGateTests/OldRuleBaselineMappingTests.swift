import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// A rule-1 baseline (no `idRule`) read by this rule: its queue entries' ids are computed
/// again from their kind, type and frames, so that the run it recorded is all known.
@Suite struct OldRuleBaselineMappingTests {
  /// `rule1-baseline.json` is what rule 1 recorded of `leaks.jsonl` with the fixture's
  /// suppressions (the golden `expected/leaks.baseline.json` before rule 2).
  @Test func aRuleOneBaselineMapsToTheFindingsItRecorded() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let suppressions = try GateFixtures.suppressions()
    let text = try String(contentsOfFile: GateFixtures.path("rule1-baseline.json"), encoding: .utf8)
    #expect(!text.contains("idRule"))
    let baseline = try Baseline.parse(text, path: "rule1-baseline.json")
    #expect(baseline.writtenByOldRule)
    #expect(baseline.idRule == 1)
    // The file's ids are rule 1's: none is a finding's id now.
    let fileIDs = Set(text.split(separator: "\"").filter { $0.count == 12 }.map(String.init))
    #expect(!report.findings.contains { fileIDs.contains($0.id.hex) })
    let result = Gate(suppressions: suppressions, baseline: baseline).evaluate(report)
    #expect(result.passed)
    #expect(result.fixedBaselineEntries.isEmpty)
    #expect(result.counted.isEmpty)
    #expect(result.known.count == baseline.entries.count)
  }

  @Test func aBaselineOfThisRuleKeepsItsIDs() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let written = Baseline(recording: Gate().evaluate(report), path: "b.json")
    let read = try Baseline.parse(written.serialized(), path: "b.json")
    #expect(!read.writtenByOldRule)
    #expect(read.entries.map(\.id) == written.entries.map(\.id))
  }

  @Test(arguments: ["0", "4"])
  func anUnknownRuleIsRefused(_ rule: String) {
    #expect {
      try Baseline.parse(
        "{\"baselineVersion\": 1, \"idRule\": \(rule), \"findings\": []}", path: "b.json")
    } throws: { error in
      "\(error)".contains("idRule \(rule) is not one this dealloctrace knows")
    }
  }
}

/// A JSON report saved before rule 2 (no `idRule`) holds rule 1's ids: `diff` computes its
/// findings' ids again from their fields, so that an unchanged leak is not new and gone.
@Suite struct OldRuleSavedReportTests {
  @Test func aSavedReportWithoutTheRuleGetsThisRulesIDs() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let text = JSONRenderer().render(report)
    #expect(text.contains("\"idRule\": \(FindingID.rule),"))
    var old = text.replacingOccurrences(of: "\"idRule\": \(FindingID.rule),", with: "")
    for finding in report.findings {
      old = old.replacingOccurrences(of: "\"\(finding.id.hex)\"", with: "\"000000000000\"")
    }
    #expect(!old.contains("idRule"))
    let saved = try DiffSide.parseSavedReport(old, path: "base.json")
    #expect(saved.findings.map(\.id) == report.findings.map(\.id))
    // The same report with its rule keeps the ids it says.
    let current = try DiffSide.parseSavedReport(
      old.replacingOccurrences(
        of: "\"reportVersion\": 1,",
        with: "\"reportVersion\": 1, \"idRule\": \(FindingID.rule),"),
      path: "base.json")
    #expect(current.findings.allSatisfy { $0.id.hex == "000000000000" })
  }
}

/// An `id:` suppression written before rule 2 names the finding's rule-1 id: it still
/// covers that finding, and only it.
@Suite struct OldRuleSuppressionTests {
  @Test func anIDSuppressionOfTheOldRuleStillCoversItsFinding() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let target = try #require(report.findings.first { $0.signature.type == "Feed.FeedViewModel" })
    let old = FindingID.legacy(
      kind: target.kind, type: target.signature.type,
      symbols: target.signature.frames.map(FindingID.stableName),
      holderKey: target.signature.holderKey)
    #expect(old != target.id)
    let list = try SuppressionList.parse("id:\(old.hex)   known, FEED-1\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(report)
    #expect(result.suppressed.map(\.finding.id) == [target.id])
    #expect(result.unusedSuppressions.isEmpty)
  }
}
