import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// Opens the HTML report in headless Chromium: the charts render, the script runs without
/// an error, and hostile log text stays text in a real browser's DOM.
final class HTMLInBrowserTests: XCTestCase {
  private func render(_ fixture: String) throws -> URL {
    let directory = try scratchDirectory("visual").url
    let file = directory.appendingPathComponent("report.html")
    let html = HTMLRenderer().render(try Fixtures.report(fixture))
    try Data(html.utf8).write(to: file)
    return file
  }

  private func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
  }

  /// Console messages Chromium logs for script errors.
  private func scriptErrors(_ log: String) -> [String] {
    log.split(separator: "\n").map(String.init).filter {
      $0.contains("Uncaught")
        || ($0.contains("CONSOLE") && $0.localizedCaseInsensitiveContains("error"))
    }
  }

  func testDemoReportRendersItsChartsAndRunsItsScript() throws {
    let browser = try HeadlessChromium.require()
    let (dom, log) = try browser.dumpDOM(of: try render("html/demo.jsonl"))
    XCTAssertEqual(scriptErrors(log), [])
    XCTAssertTrue(dom.contains("data-ok=\"1\""), "the inline script ran to its end")
    // Two queue timelines and the histogram, each laid out with a non-empty plot.
    XCTAssertTrue(dom.contains("data-rendered-charts=\"3\""), "three charts with a drawn plot")
    XCTAssertEqual(count("<svg ", in: dom), 3)
    XCTAssertEqual(count("class=\"check-marker false-leak\"", in: dom), 2)
    XCTAssertEqual(count("class=\"check-marker true-leak\"", in: dom), 1)
    XCTAssertEqual(count("class=\"band\"", in: dom), 3)
    XCTAssertEqual(count("class=\"mark-line\"", in: dom), 8)
    XCTAssertEqual(count("class=\"depth\"", in: dom), 2)
    XCTAssertGreaterThan(count("class=\"hist-bar\"", in: dom), 1)
    // The script made the tables sortable and showed the expand button.
    XCTAssertTrue(dom.contains("tabindex=\"0\""))
    XCTAssertFalse(dom.contains("<button id=\"expand-all\" type=\"button\" hidden"))
  }

  func testHostileReportKeepsLogTextOutOfTheDOM() throws {
    let browser = try HeadlessChromium.require()
    let (dom, log) = try browser.dumpDOM(of: try render("html/hostile.jsonl"))
    XCTAssertEqual(scriptErrors(log), [])
    XCTAssertTrue(dom.contains("data-ok=\"1\""))
    XCTAssertEqual(count("<script", in: dom), 1, "no script element came from the log")
    XCTAssertEqual(count("<img", in: dom), 0)
    XCTAssertEqual(count("<b>", in: dom), 0)
    XCTAssertFalse(dom.contains("alert('mark')</script>"), "the mark label is text, not a tag")
    XCTAssertTrue(dom.contains("&lt;/script&gt;&lt;script&gt;alert('mark')&lt;/script&gt;"))
    XCTAssertTrue(dom.contains("data-rendered-charts=\"3\""))
  }
}
