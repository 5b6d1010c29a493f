import DeallocAnalysis
import Foundation
import XCTest

/// The HTML report of the demo-like fixture: well-formed, self-contained, and its charts draw
/// what the report says.
final class HTMLReportContentTests: XCTestCase {
  private var report: Report!
  private var html: String!
  private var page: XMLDocumentScan!

  override func setUpWithError() throws {
    report = try Fixtures.report("html/demo.jsonl")
    html = HTMLRenderer().render(report)
    page = try XMLDocumentScan(html)
  }

  func testFixtureReportIsWhatTheChartsAreCheckedAgainst() {
    XCTAssertEqual(report.summary.enqueued, 585)
    XCTAssertEqual(report.summary.released, 584)
    XCTAssertEqual(report.summary.falseLeaks, 2)
    XCTAssertEqual(report.summary.trueLeaks, 1)
  }

  func testPageIsOneSelfContainedDocument() {
    XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
    for outside in ["src=", "href=\"http", "href='http", "@import", "url(", "<link", "@font-face"] {
      XCTAssertFalse(html.contains(outside), "the page must load nothing: found \(outside)")
    }
    XCTAssertEqual(page.all("style").count, 1)
    XCTAssertEqual(page.all("script").count, 1)
    XCTAssertEqual(page.all("script").first?.attributes["src"], nil)
  }

  func testSummaryCardsShowEveryStateCount() {
    let cards = page.all("div", classes: ["card"])
    for state in ObjectState.allCases {
      let card = cards.first { $0.hasClass("s-\(state.rawValue)") }
      XCTAssertEqual(card?.attributes["data-count"], String(report.summary[state]), "\(state)")
    }
    XCTAssertEqual(
      cards.first { $0.hasClass("s-falseLeaks") }?.attributes["data-count"], "2")
    XCTAssertEqual(cards.first { $0.hasClass("s-trueLeaks") }?.attributes["data-count"], "1")
  }

  func testOneTimelinePerQueueWithItsMarks() {
    let timelines = page.all("svg", classes: ["chart", "timeline"])
    XCTAssertEqual(timelines.map { $0.attributes["data-queue"] }, ["shared", "images"])
    let marksPerChart = report.sessions[0].marks.count
    XCTAssertEqual(marksPerChart, 4)
    XCTAssertEqual(page.all("line", classes: ["mark-line"]).count, 2 * marksPerChart)
    let depthPaths = page.all("path", classes: ["depth"])
    XCTAssertEqual(depthPaths.count, 2)
    for path in depthPaths {
      XCTAssertTrue(path.attributes["d"]?.hasPrefix("M52,") == true, path.attributes["d"] ?? "")
      XCTAssertTrue(path.attributes["d"]?.hasSuffix("Z") == true)
    }
  }

  func testFalseLeakMarkerSitsInsideItsObjectsBandAndTrueLeakOutside() throws {
    let markers = page.all("path", classes: ["check-marker"])
    XCTAssertEqual(markers.filter { $0.hasClass("false-leak") }.count, 2)
    XCTAssertEqual(markers.filter { $0.hasClass("true-leak") }.count, 1)
    let bands = page.all("rect", classes: ["band"])
    XCTAssertEqual(bands.count, 3)
    for marker in markers {
      let lane = try XCTUnwrap(marker.attributes["data-lane"])
      let x = try XCTUnwrap(marker.attributes["data-x"].flatMap(Double.init))
      let band = try XCTUnwrap(bands.first { $0.attributes["data-lane"] == lane })
      let start = try XCTUnwrap(band.attributes["x"].flatMap(Double.init))
      let width = try XCTUnwrap(band.attributes["width"].flatMap(Double.init))
      let inside = x >= start && x <= start + width
      if marker.hasClass("false-leak") {
        XCTAssertTrue(inside, "false leak at x=\(x) outside its band \(start)…\(start + width)")
      } else {
        XCTAssertFalse(inside, "true leak at x=\(x) inside its band \(start)…\(start + width)")
      }
    }
  }

  func testHistogramBarsCountEveryReleasedObject() throws {
    let bars = page.all("rect", classes: ["hist-bar"])
    XCTAssertGreaterThan(bars.count, 1)
    let total = bars.compactMap { $0.attributes["data-count"].flatMap(Int.init) }.reduce(0, +)
    XCTAssertEqual(total, report.summary.released)
    let percentiles = page.all("line", classes: ["pct"]).compactMap {
      $0.attributes["data-percentile"]
    }
    XCTAssertEqual(percentiles, ["p50", "p90", "p99"])
  }

  func testFindingsAreExpandableWithTheirStacks() {
    let findings = page.all("details", classes: ["finding"])
    XCTAssertEqual(findings.count, report.findings.count)
    XCTAssertEqual(
      findings.map { $0.attributes["data-kind"] }, ["leaked", "neverReleased"])
    XCTAssertEqual(findings.first?.attributes["open"], "open")
    // Each stack lists the program's frames (after the queue's) and folds the plumbing, the
    // frames an id leaves out, into one note.
    let stacks = report.findings.map { finding in
      finding.stack.drop(while: Signature.isMachinery).map {
        SymbolNormalization.isPlumbing(FindingID.stableName(of: $0))
      }
    }
    let frames = page.all("li").filter { $0.ancestors.contains("ol") }
    XCTAssertEqual(frames.count, stacks.map { $0.filter { !$0 }.count }.reduce(0, +))
    let folded = page.all("p", classes: ["machinery"])
    XCTAssertEqual(folded.count, stacks.filter { $0.contains(true) }.count)
    XCTAssertTrue(
      frames.contains { $0.text == "FeedDemo.closeProfileScreen() -> Swift.AnyObject?" },
      "the stack names the caller")
  }

  func testPerTypeTableHasARowPerType() {
    let table = page.all("table", classes: ["types"])
    XCTAssertEqual(table.count, 1)
    let rows = page.all("tr").filter {
      $0.isInside("table", withClass: "types") && $0.ancestors.last == "tbody"
    }
    XCTAssertEqual(rows.count, report.types.count)
    for type in report.types {
      XCTAssertTrue(page.all("code").contains { $0.text == type.type }, type.type)
    }
  }
}
