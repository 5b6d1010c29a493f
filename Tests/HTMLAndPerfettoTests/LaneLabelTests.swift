import DeallocAnalysis
import XCTest

/// Lane labels stay off their object's band, so the band a check sits in stays readable:
/// on the real FeedDemo recording, one check sits at the right edge and its band at the
/// left, leaving room only between them.
final class LaneLabelTests: XCTestCase {
  func testLaneLabelsDoNotCoverTheirBands() throws {
    let report = try Fixtures.report("recorded-feed-demo.jsonl")
    let page = try XMLDocumentScan(HTMLRenderer().render(report))
    let bands = page.all("rect", classes: ["band"])
    let labels = page.all("text", classes: ["lane-label"])
    XCTAssertEqual(bands.count, 2, "the demo's two checked objects that a queue held")
    XCTAssertEqual(labels.count, 2, "one label per lane (alive checks only)")
    for band in bands {
      let lane = try XCTUnwrap(band.attributes["data-lane"])
      let label = try XCTUnwrap(labels.first { $0.attributes["data-lane"] == lane })
      let bandStart = try XCTUnwrap(band.attributes["x"].flatMap(Double.init))
      let bandEnd = bandStart + (try XCTUnwrap(band.attributes["width"].flatMap(Double.init)))
      let x = try XCTUnwrap(label.attributes["x"].flatMap(Double.init))
      // The renderer's own width estimate for its 11 px labels: 6.2 px a character.
      let width = Double(label.text.count) * 6.2
      let (start, end) = label.attributes["text-anchor"] == "end" ? (x - width, x) : (x, x + width)
      XCTAssertTrue(
        label.text.contains(" · "), "lane \(lane): '\(label.text)' lost the check's name")
      XCTAssertTrue(
        end <= bandStart || start >= bandEnd,
        "lane \(lane): label '\(label.text)' at \(start)…\(end) covers its band "
          + "\(bandStart)…\(bandEnd)")
    }
  }
}
