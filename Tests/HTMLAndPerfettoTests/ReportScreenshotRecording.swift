import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// Re-takes `docs/report-screenshot.png`, the README's picture of the HTML report down to its
/// findings and their holder paths, when asked:
///
///     DEALLOCTRACE_RECORD_SCREENSHOT=1 \
///     DEALLOCTRACE_SCREENSHOT_LOG=/path/to/demo.jsonl \
///       swift test --filter ReportScreenshotRecording
///
/// Without `DEALLOCTRACE_SCREENSHOT_LOG` it uses `fixtures/html/demo.jsonl`. Skipped unless
/// `DEALLOCTRACE_RECORD_SCREENSHOT` is set; it fails after recording, so a recording run is
/// never mistaken for a passing test run.
final class ReportScreenshotRecording: XCTestCase {
  func testRecordScreenshot() throws {
    let environment = ProcessInfo.processInfo.environment
    guard environment["DEALLOCTRACE_RECORD_SCREENSHOT"] != nil else {
      throw XCTSkip("set DEALLOCTRACE_RECORD_SCREENSHOT=1 to re-take docs/report-screenshot.png")
    }
    let browser = try HeadlessChromium.require()
    let log = environment["DEALLOCTRACE_SCREENSHOT_LOG"] ?? Fixtures.path("html/demo.jsonl")
    let page = try scratchDirectory("visual").url.appendingPathComponent("report.html")
    try Data(HTMLRenderer().render(try DeallocAnalysis.analyze([log])).utf8).write(to: page)
    let png = Fixtures.root.deletingLastPathComponent()
      .appendingPathComponent("docs/report-screenshot.png")
    try browser.screenshot(of: page, to: png, size: (1280, 2450))
    XCTFail("recorded \(png.path) from \(log); unset DEALLOCTRACE_RECORD_SCREENSHOT to test")
  }
}
