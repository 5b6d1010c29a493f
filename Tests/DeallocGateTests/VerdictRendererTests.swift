import DeallocAnalysis
import Foundation
import Testing

/// The text, JSON and Markdown verdicts against golden files, and the properties that
/// matter whatever the wording.
@Suite struct VerdictRendererTests {
  func leaksResult() throws -> GateResult {
    Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
  }

  @Test func goldenVerdicts() throws {
    let result = try leaksResult()
    try GateFixtures.assertGolden(GateTextRenderer().render(result), "leaks.txt")
    try GateFixtures.assertGolden(GateJSONRenderer().render(result), "leaks.json")
    try GateFixtures.assertGolden(GateMarkdownRenderer().render(result), "leaks.md")
    let clean = Gate().evaluate(try GateFixtures.report("clean.jsonl"))
    try GateFixtures.assertGolden(GateTextRenderer().render(clean), "clean.txt")
    let stalled = Gate().evaluate(try GateFixtures.report("stalled.jsonl"))
    try GateFixtures.assertGolden(GateTextRenderer().render(stalled), "stalled.txt")
  }

  @Test func textVerdictNamesFailedThresholdsSuppressionsAndUnused() throws {
    let text = GateTextRenderer().render(try leaksResult())
    #expect(
      text.hasPrefix(
        "dealloctrace check: FAILED (2 thresholds exceeded: --max-leaked, --max-true-leaks)\n"))
    #expect(
      text.contains(
        "FAIL  --max-leaked         2 leaked objects, 2 over --max-leaked 0, 1 more suppressed"))
    #expect(
      text.contains(
        "by type:Feed.ImageDecoder* (fixtures/gate/suppressions.txt:4): decoder pool keeps two decoders for the whole run"
      ))
    #expect(text.contains("fixtures/gate/suppressions.txt:6 type:Feed.LegacyCache (removed in 2.0"))
  }

  @Test func textVerdictCapsTheFindingsShown() throws {
    let path = try writeManyLeaksLog(count: 8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = Gate().evaluate(try DeallocAnalysis.analyze([path]))
    let text = GateTextRenderer().render(result)
    #expect(text.contains("Top findings (5 of 8)"))
    #expect(text.contains("… 3 more findings not shown; `dealloctrace report` lists them all"))
  }

  @Test func textVerdictKeepsLogTextOnOneLine() throws {
    let text = GateTextRenderer().render(Gate().evaluate(try GateFixtures.report("hostile.jsonl")))
    // The check's label holds "\r\n::error::injected"; it must not start a line.
    for line in text.split(separator: "\n") {
      #expect(!line.hasPrefix("::"))
      #expect(!line.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" })
    }
    #expect(text.contains(#"Tests.test\r\n::error::injected saw"#))
    #expect(text.contains(#"Feed.Bell\u{7}Escape\u{1B}]0;owned"#))
  }

  @Test func jsonVerdictIsValidAndComplete() throws {
    let json = GateJSONRenderer().render(try leaksResult())
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    #expect(object["passed"] as? Bool == false)
    let thresholds = try #require(object["thresholds"] as? [[String: Any]])
    #expect(
      thresholds.map { $0["option"] as? String } == [
        "--max-leaked", "--max-stuck", "--max-true-leaks", "--max-never-released",
      ])
    #expect(thresholds.map { $0["exceededBy"] as? Int } == [2, 0, 1, 0])
    #expect(thresholds[3]["limit"] is NSNull)
    #expect((object["findings"] as? [Any])?.count == 3)
    let suppressed = try #require(object["suppressed"] as? [[String: Any]])
    #expect((suppressed[0]["suppression"] as? [String: Any])?["line"] as? Int == 5)
    let unused = try #require(object["unusedSuppressions"] as? [[String: Any]])
    #expect(unused.map { $0["pattern"] as? String } == ["type:Feed.LegacyCache"])
  }
}
