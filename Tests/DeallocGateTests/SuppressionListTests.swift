import DeallocAnalysis
import Foundation
import Testing

@Suite struct SuppressionListTests {
  @Test func readsPatternsReasonsCommentsAndQuotes() throws {
    let text = """
      # a comment line
        # an indented comment

      type:Feed.ImageDecoder*          decoder pool keeps two decoders\r
      frame:*ThirdPartySDK.Session*    # the SDK caches its session (FEED-812)
      frame:"closure #1 in Feed.*"     quoted: spaces and '#' belong to the pattern
      type:Feed.Bare
      frame:"say \\"hi\\"*"\tescaped quotes
      """
    let list = try SuppressionList.parse(text, file: "s.txt")
    let rows = list.suppressions.map { ($0.target, $0.glob.pattern, $0.reason, $0.line) }
    try #require(rows.count == 5)
    #expect(rows[0] == (.type, "Feed.ImageDecoder*", "decoder pool keeps two decoders", 4))
    #expect(
      rows[1] == (.frame, "*ThirdPartySDK.Session*", "the SDK caches its session (FEED-812)", 5))
    #expect(
      rows[2] == (.frame, "closure #1 in Feed.*", "quoted: spaces and '#' belong to the pattern", 6)
    )
    #expect(rows[3] == (.type, "Feed.Bare", "", 7))
    #expect(rows[4] == (.frame, #"say "hi"*"#, "escaped quotes", 8))
    #expect(list.suppressions[2].pattern == #"frame:"closure #1 in Feed.*""#)
    #expect(list.suppressions[2].location == "s.txt:6")
  }

  @Test(arguments: [
    ("typo:Feed.*", "unknown suppression kind 'typo'; use type:GLOB or frame:GLOB"),
    (
      "Feed.ImageDecoder",
      "'Feed.ImageDecoder' is not a suppression; write type:GLOB or frame:GLOB, then a reason"
    ),
    ("type:   reason without a pattern", "empty pattern after 'type:'"),
    ("frame:\"never closed", "the quoted pattern is never closed by '\"'"),
    ("frame:\"a b\"reason", "expected a space between the closing quote and the reason"),
    ("type:Feed.[abc", "bad pattern 'Feed.[abc': column 6: '[' is never closed by ']'"),
    ("TYPE:Feed", "unknown suppression kind 'TYPE'; use type:GLOB or frame:GLOB"),
  ])
  func badLinesAreRefusedWithFileAndLine(_ line: String, _ message: String) {
    let text = "# header\n\n" + line + "\ntype:Fine\n"
    #expect(throws: AnalysisError.badSuppression(file: "s.txt", line: 3, message: message)) {
      try SuppressionList.parse(text, file: "s.txt")
    }
  }

  @Test func badFixtureNamesItsFourthLine() {
    let path = GateFixtures.path("bad-suppressions.txt")
    #expect(
      throws: AnalysisError.badSuppression(
        file: path, line: 4,
        message: "unknown suppression kind 'typo'; use type:GLOB or frame:GLOB")
    ) { try SuppressionList.load(path: path) }
  }

  @Test func missingFileIsUnreadable() {
    let error = AnalysisError.suppressionsUnreadable(
      path: "/nonexistent/s.txt", reason: "no such file")
    #expect(throws: error) { try SuppressionList.load(path: "/nonexistent/s.txt") }
    #expect(error.description == "/nonexistent/s.txt: cannot read the suppressions: no such file")
  }

  @Test func directoryIsUnreadable() {
    #expect(
      throws: AnalysisError.suppressionsUnreadable(path: "/tmp", reason: "is a directory")
    ) { try SuppressionList.load(path: "/tmp") }
  }

  @Test func typeSuppressionMatchesTheTypeAndFrameSuppressionAnyFrame() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let sdk = try #require(
      report.findings.first { $0.signature.type == "ThirdPartySDK.SessionToken" })
    let list = try SuppressionList.parse(
      """
      type:ThirdPartySDK.*
      frame:Feed.AppDelegate.logout()*
      frame:*libc_start*
      type:Feed.*
      frame:Feed.AppDelegate.logout
      """, file: "s.txt")
    let matches = list.suppressions.map { $0.matches(sdk) }
    #expect(matches == [true, true, true, false, false])
  }
}
