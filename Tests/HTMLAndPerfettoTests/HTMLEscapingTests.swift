import DeallocAnalysis
import DeallocLog
import Foundation
import TextEscaping
import XCTest

/// Everything from the log is text on the page, never markup: type names like
/// `Array<Node>`, labels holding `<script>`, quotes, ampersands, `]]>` and control characters.
final class HTMLEscapingTests: XCTestCase {
  func testEscapeCoversMarkupQuotesAndControlCharacters() {
    XCTAssertEqual(
      Escaping.html("<a href=\"x\">'&'</a>\u{1}\t"),
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\\u{1}\t")
    XCTAssertEqual(Escaping.html("Swift.Array<Node> é😀"), "Swift.Array&lt;Node&gt; é😀")
  }

  func testHostileFixtureRendersWellFormedWithOnlyTheRenderersOwnScript() throws {
    let report = try Fixtures.report("html/hostile.jsonl")
    let html = HTMLRenderer().render(report)
    let page = try XMLDocumentScan(html)
    XCTAssertEqual(page.all("script").count, 1, "only the renderer's own script element")
    XCTAssertEqual(html.components(separatedBy: "<script").count - 1, 1)
    XCTAssertFalse(html.contains("<img"))
    XCTAssertFalse(html.contains("<b>"))
    XCTAssertFalse(html.contains("alert('"), "quotes inside log text are escaped too")
    XCTAssertEqual(html.components(separatedBy: "]]>").count - 1, 1, "only the script's CDATA end")
    XCTAssertFalse(html.contains("<!-- \""), "a label cannot open a comment")
    XCTAssertFalse(html.contains("\u{1}"))
  }

  func testHostileTextsSurviveAsText() throws {
    let report = try Fixtures.report("html/hostile.jsonl")
    let page = try XMLDocumentScan(HTMLRenderer().render(report))
    let text = page.texts.joined()
    for original in [
      "Swift.Array<Evil.Node>", "Evil.Box<\"A&B\">", "Evil.Holder<'single' & \"double\">",
      "Evil.Cache<script>alert('true')</script>", "q<script>alert('q')</script>",
      "</script><script>alert('mark')</script>",
    ] {
      XCTAssertTrue(text.contains(original), "\(original) should read as text")
    }
    let queues = page.all("svg", classes: ["timeline"]).compactMap { $0.attributes["data-queue"] }
    XCTAssertEqual(queues, ["q<script>alert('q')</script>", "other&queue"])
    let labels = page.all("text", classes: ["lane-label"]).map(\.text)
    XCTAssertTrue(labels.contains { $0.contains("<script>alert('false leak')</script>") })
    let checkLabels = page.all("code").map(\.text)
    XCTAssertTrue(
      checkLabels.contains("<img src=x onerror=alert(1)> & \"quotes\" 'too' \\u{1}ctl"),
      "the label reads as written, its control character shown as \\u{1}")
  }

  func testHostileFixtureStillDrawsItsVerdicts() throws {
    let report = try Fixtures.report("html/hostile.jsonl")
    XCTAssertEqual(report.summary.falseLeaks, 1)
    XCTAssertEqual(report.summary.trueLeaks, 2)
    let page = try XMLDocumentScan(HTMLRenderer().render(report))
    let markers = page.all("path", classes: ["check-marker"])
    XCTAssertEqual(markers.filter { $0.hasClass("false-leak") }.count, 1)
    XCTAssertEqual(markers.filter { $0.hasClass("true-leak") }.count, 2)
  }
}
