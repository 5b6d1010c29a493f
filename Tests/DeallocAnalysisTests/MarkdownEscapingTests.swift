import DeallocAnalysis
import Testing

@Suite struct MarkdownEscapingTests {
  /// A type name can carry any bytes the log's JSON allows. In a pull-request comment or a
  /// step summary, a line break inside a code span or fence would end it and let the rest
  /// of the name be read as Markdown.
  @Test func lineBreaksOfEveryKindStayInsideCodeSpansAndFences() throws {
    let hostile = #"Evil\r\n```\n# Heading\rMore\u001b[31m|`Tail"#
    let log = try TemporaryLog([
      Line.session(),
      #"{"ev":"stack","id":1,"frames":[{"ip":"0x10","sym":"caller\r\n```\r# injected"}]}"#,
      #"{"ev":"enqueue","t":10,"id":1,"obj":"0x1","type":"\#(hostile)","q":"q","stack":1}"#,
      #"{"ev":"release","t":20,"id":1,"freed":false,"rc":1}"#,
      Line.end(t: 30, pending: 0),
    ])
    let markdown = MarkdownRenderer().render(try log.report())
    let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(!lines.contains { $0.hasPrefix("# Heading") || $0.hasPrefix("More") })
    #expect(!lines.contains { $0.hasPrefix("# injected") })
    #expect(!markdown.contains("\r"))
    #expect(!markdown.contains("\u{1b}"))
    // The name is still there, on one line, with its pieces in order.
    #expect(lines.contains { $0.contains("Evil") && $0.contains("Heading") && $0.contains("Tail") })
    // Every fence that opens also closes: an even number of fence lines.
    #expect(
      lines.filter { $0.trimmingPrefix(while: \.isWhitespace).hasPrefix("```") }.count % 2 == 0)
  }
}
