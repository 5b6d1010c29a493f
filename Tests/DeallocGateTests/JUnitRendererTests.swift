import DeallocAnalysis
import Foundation
import Testing

@Suite struct JUnitRendererTests {
  func suite(_ result: GateResult, time: Double = 0) throws -> (ParsedElement, ParsedElement) {
    let root = try ParsedElement.parse(JUnitRenderer(time: time).render(result))
    #expect(root.name == "testsuites")
    let suites = root.children("testsuite")
    #expect(suites.count == 1)
    return (root, try #require(suites.first))
  }

  @Test func suiteCountsMatchItsCases() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    let (root, suite) = try suite(result, time: 0.25)
    #expect(suite["name"] == "dealloctrace")
    let cases = suite.children("testcase")
    // 4 thresholds + 5 finding signatures.
    #expect(cases.count == 4 + result.findings.count)
    #expect(cases.count == 9)
    let failures = cases.filter { $0.child("failure") != nil }.count
    let skipped = cases.filter { $0.child("skipped") != nil }.count
    #expect(failures == 4)  // 2 thresholds, FeedViewModel leaked, ImageCache true leak
    #expect(skipped == 2)  // the two suppressed findings
    for element in [root, suite] {
      #expect(element["tests"] == "9")
      #expect(element["failures"] == "\(failures)")
      #expect(element["errors"] == "0")
      #expect(element["skipped"] == "\(skipped)")
      #expect(element["time"] == "0.250")
    }
  }

  @Test func oneCasePerThresholdWithItsVerdict() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    let (_, suite) = try suite(result)
    let thresholds = suite.children("testcase").filter {
      $0["classname"] == "dealloctrace.thresholds"
    }
    #expect(
      thresholds.map { $0["name"] } == [
        "--max-leaked", "--max-stuck", "--max-true-leaks", "--max-never-released",
      ])
    let leaked = try #require(thresholds[0].child("failure"))
    #expect(leaked["type"] == "threshold")
    #expect(leaked["message"] == "2 leaked objects, 2 over --max-leaked 0, 1 more suppressed")
    #expect(thresholds[1].child("failure") == nil)
    #expect(thresholds[1].child("system-out")?.text == "0 stuck objects (max 0)")
  }

  @Test func failuresCarryTheExplanationAndTheStack() throws {
    let result = Gate().evaluate(try GateFixtures.report("leaks.jsonl"))
    let (_, suite) = try suite(result)
    let leaked = try #require(
      suite.children("testcase").first {
        $0["classname"] == "dealloctrace.leaked"
          && $0["name"]?.hasPrefix("Feed.FeedViewModel from FeedScreen.close() [id:") == true
      })
    let failure = try #require(leaked.child("failure"))
    #expect(failure["type"] == "leaked")
    #expect(
      failure["message"] == "leaked after release: Feed.FeedViewModel from FeedScreen.close() (×2)")
    #expect(failure.text.contains("released by queue 'shared' but stayed alive"))
    #expect(
      failure.text.contains(
        "enqueued at:\n  Feed.FeedScreen.close() -> ()\n  Feed.FeedTests.testClose() -> ()"))
    #expect(failure.text.contains("(fixtures/gate/leaks.jsonl:14)"))
    // No symbolizer: no file or line.
    #expect(leaked["file"] == nil)
    #expect(leaked["line"] == nil)
  }

  @Test func suppressedFindingsAreSkippedWithTheirReason() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    let (_, suite) = try suite(result)
    let skipped = suite.children("testcase").compactMap { $0.child("skipped")?["message"] }
    #expect(
      skipped == [
        "suppressed by frame:*ThirdPartySDK.Session* (fixtures/gate/suppressions.txt:5): the SDK caches its session on purpose (ticket FEED-812)",
        "suppressed by type:Feed.ImageDecoder* (fixtures/gate/suppressions.txt:4): decoder pool keeps two decoders for the whole run",
      ])
    #expect(
      suite.child("system-out")?.text.contains(
        "unused suppression fixtures/gate/suppressions.txt:6") == true)
  }

  @Test func casesCarryFileAndLineWhenAFrameHasThem() throws {
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: FixtureSymbolizer())
    let (_, suite) = try suite(Gate().evaluate(report))
    let viewModel = try #require(
      suite.children("testcase").first {
        $0["name"]?.hasPrefix("Feed.FeedViewModel from FeedScreen.close() [id:") == true
      })
    #expect(viewModel["file"] == "/ci/work/feed/Sources/Feed/FeedScreen.swift")
    #expect(viewModel["line"] == "\(0x1b2c3 % 1000 + 1)")
    // A true leak of an object never enqueued has no stack, hence no file.
    let cache = try #require(
      suite.children("testcase").first { $0["classname"] == "dealloctrace.trueLeak" })
    #expect(cache["file"] == nil)
    // Thresholds never have one.
    #expect(
      suite.children("testcase").filter { $0["classname"] == "dealloctrace.thresholds" }.allSatisfy
      { $0["file"] == nil })
  }

  @Test func theQueuesOwnFramesNeverGiveACaseItsFile() throws {
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: MachineryOnlySymbolizer())
    let (_, suite) = try suite(Gate().evaluate(report))
    let findings = suite.children("testcase").filter {
      $0["classname"] != "dealloctrace.thresholds"
    }
    #expect(findings.count == 5)
    #expect(findings.allSatisfy { $0["file"] == nil && $0["line"] == nil })
  }

  @Test func hostileNamesAreEscapedAndForbiddenCharactersReplaced() throws {
    let result = Gate().evaluate(try GateFixtures.report("hostile.jsonl"))
    let xml = JUnitRenderer().render(result)
    // Raw control characters that XML 1.0 forbids must not reach the file at all.
    #expect(!xml.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" && $0 != "\t" })
    let (_, suite) = try suite(result)
    // Without the ids, which follow every finding's name.
    let names = suite.children("testcase").compactMap { $0["name"] }.map {
      $0.replacing(#/ \[id:[0-9a-f]{12}\]$/#, with: "")
    }
    #expect(
      names.contains(
        "Feed.Box<Swift.Dictionary<Swift.String, Swift.Int>> from Feed.Render<Swift.Dictionary<Swift.String, Swift.Int>>.draw(100%, \"a&b\")"
      ))
    #expect(names.contains(#"Feed.Bell\u{7}Escape\u{1B}]0;owned\u{7},key:value%0A"#))
    let trueLeak = try #require(
      suite.children("testcase").first { $0["classname"] == "dealloctrace.trueLeak" })
    // The label's "\r\n" survives as text (a carriage return reference and a newline).
    #expect(trueLeak.child("failure")?.text.contains("Tests.test\r\n::error::injected saw") == true)
  }

  @Test func everyCharacterXMLForbidsIsReplacedNotReferenced() throws {
    // NUL, other C0 controls, U+FFFE and U+FFFF cannot appear in XML 1.0 even as `&#…;`.
    let hostile = "a\u{0}b\u{1f}c\u{fffe}d\u{ffff}e\u{b}f"
    let list = try SuppressionList.parse(
      "type:Feed.ImageDecoder*  x\ntype:Nothing  y\n", file: "s\u{1}.txt")
    var suppressions = list
    suppressions.suppressions[0].reason = hostile
    suppressions.suppressions[1].reason = hostile
    let result = Gate(suppressions: suppressions).evaluate(try GateFixtures.report("leaks.jsonl"))
    let xml = JUnitRenderer().render(result)
    let allowed = { (v: UInt32) in
      v == 0x9 || v == 0xA || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
        || v >= 0x10000
    }
    #expect(xml.unicodeScalars.allSatisfy { allowed($0.value) })
    #expect(!xml.contains("&#0;") && !xml.contains("&#x"))
    let (_, suite) = try suite(result)
    let expected = #"a\u{0}b\u{1F}c\u{FFFE}d\u{FFFF}e\u{B}f"#
    let skipped = suite.children("testcase").compactMap { $0.child("skipped")?["message"] }
    #expect(skipped.contains { $0.hasSuffix(expected) && $0.contains(#"(s\u{1}.txt:1)"#) })
    #expect(suite.child("system-out")?.text.hasSuffix(expected) == true)
  }

  @Test func attributeLineBreaksSurviveParsing() throws {
    // A threshold sentence never has a line break, but a suppression reason or a check
    // label may: attribute values keep them as character references.
    let report = try GateFixtures.report("leaks.jsonl")
    var list = try GateFixtures.suppressions()
    list.suppressions[0].reason = "line one\nline two\ttabbed"
    let (_, suite) = try suite(Gate(suppressions: list).evaluate(report))
    let messages = suite.children("testcase").compactMap { $0.child("skipped")?["message"] }
    #expect(messages.contains { $0.hasSuffix("line one\nline two\ttabbed") })
  }

  @Test func goldenJUnit() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl", symbolizer: FixtureSymbolizer()))
    try GateFixtures.assertGolden(JUnitRenderer().render(result), "leaks.junit.xml")
  }
}
