import DeallocAnalysis
import DeallocLog
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
    ("typo:Feed.*", "unknown suppression kind 'typo'; use type:GLOB, frame:GLOB or id:HASH"),
    (
      "Feed.ImageDecoder",
      "'Feed.ImageDecoder' is not a suppression; write type:GLOB, frame:GLOB or id:HASH, then a reason"
    ),
    ("type:   reason without a pattern", "empty pattern after 'type:'"),
    ("frame:\"never closed", "the quoted pattern is never closed by '\"'"),
    ("frame:\"a b\"reason", "expected a space between the closing quote and the reason"),
    ("type:Feed.[abc", "bad pattern 'Feed.[abc': column 6: '[' is never closed by ']'"),
    ("TYPE:Feed", "unknown suppression kind 'TYPE'; use type:GLOB, frame:GLOB or id:HASH"),
    (
      "type:Foo#x",
      ##"'#' inside the pattern 'Foo#x': put a space before a comment, or quote (type:"Foo#x") or escape (\#) a '#' to match"##
    ),
    (
      "frame:*closure#1*  reason",
      ##"'#' inside the pattern '*closure#1*': put a space before a comment, or quote (frame:"*closure#1*") or escape (\#) a '#' to match"##
    ),
    (
      "type:#Foo",
      ##"'#' inside the pattern '#Foo': put a space before a comment, or quote (type:"#Foo") or escape (\#) a '#' to match"##
    ),
    (
      "type:Feed.[#]x",
      ##"'#' inside the pattern 'Feed.[#]x': put a space before a comment, or quote (type:"Feed.[#]x") or escape (\#) a '#' to match"##
    ),
  ])
  func badLinesAreRefusedWithFileAndLine(_ line: String, _ message: String) {
    let text = "# header\n\n" + line + "\ntype:Fine\n"
    #expect(throws: AnalysisError.badSuppression(file: "s.txt", line: 3, message: message)) {
      try SuppressionList.parse(text, file: "s.txt")
    }
  }

  @Test func hashStartsACommentOnlyAfterASpaceAndMatchesWhenQuotedOrEscaped() throws {
    let list = try SuppressionList.parse(
      """
      type:Feed.Cache #reason after a space
      type:Feed.Cache\t# tab, then a reason that mentions #42
      type:Feed.Cell\\#1  escaped
      type:"Feed.Cell#2"  quoted
      """, file: "s.txt")
    let rows = list.suppressions.map { ($0.glob.pattern, $0.reason) }
    try #require(rows.count == 4)
    #expect(rows[0] == ("Feed.Cache", "reason after a space"))
    #expect(rows[1] == ("Feed.Cache", "tab, then a reason that mentions #42"))
    #expect(rows[2] == (##"Feed.Cell\#1"##, "escaped"))
    #expect(rows[3] == ("Feed.Cell#2", "quoted"))
    #expect(list.suppressions[2].glob.matches("Feed.Cell#1"))
    #expect(list.suppressions[3].glob.matches("Feed.Cell#2"))
    #expect(!list.suppressions[0].glob.matches("Feed.Cache#x"))
  }

  @Test func patternReadsBackAsTheSameSuppression() throws {
    let text = ##"""
      type:Feed.Plain
      frame:"closure #1 in Feed.*"
      frame:"say \"hi\"*"
      type:Feed.Cell\#1
      """##
    let list = try SuppressionList.parse(text, file: "s.txt")
    let patterns = list.suppressions.map(\.pattern)
    #expect(
      patterns == [
        "type:Feed.Plain", ##"frame:"closure #1 in Feed.*""##, ##"frame:"say \"hi\"*""##,
        ##"type:"Feed.Cell\#1""##,
      ])
    let again = try SuppressionList.parse(patterns.joined(separator: "\n"), file: "s.txt")
    #expect(again.suppressions.map(\.glob) == list.suppressions.map(\.glob))
  }

  @Test func badFixtureNamesItsFourthLine() {
    let path = GateFixtures.path("bad-suppressions.txt")
    #expect(
      throws: AnalysisError.badSuppression(
        file: path, line: 4,
        message: "unknown suppression kind 'typo'; use type:GLOB, frame:GLOB or id:HASH")
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
