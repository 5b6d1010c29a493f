import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import XCTest

/// A large log: the HTML page stays a few megabytes and says what it left out, and the
/// Perfetto export streams in chunks while holding only what is queued.
final class LargeLogTests: XCTestCase {
  private static let log: URL = {
    let url = try! ScratchDirectory("large-log").url.appendingPathComponent("large.jsonl")
    try! LargeLog.write(to: url)
    return url
  }()

  override class func tearDown() {
    try? FileManager.default.removeItem(at: log.deletingLastPathComponent())
    super.tearDown()
  }

  func testHTMLOfALargeLogStaysSmallAndSaysWhatItLeftOut() throws {
    let report = try DeallocAnalysis.analyze([Self.log.path])
    XCTAssertEqual(report.summary.enqueued, 60_000)
    XCTAssertEqual(report.types.count, 1_500)
    let html = HTMLRenderer().render(report)
    XCTAssertLessThan(html.utf8.count, 3_000_000, "the page stays under 3 MB")
    let page = try XMLDocumentScan(html)
    let limits = HTMLRenderer.Limits()
    XCTAssertEqual(page.all("svg", classes: ["timeline"]).count, limits.charts)
    let typeRows = page.all("tr").filter {
      $0.isInside("table", withClass: "types") && $0.ancestors.last == "tbody"
    }
    XCTAssertEqual(typeRows.count, limits.types)
    let notes = page.all("p", classes: ["omitted"]).map(\.text)
    XCTAssertTrue(notes.contains("Showing 200 of 1,500 types; 1,300 not shown."), "\(notes)")
    XCTAssertTrue(notes.contains("Showing 24 of 30 queue timelines; 6 not shown."), "\(notes)")
    XCTAssertTrue(notes.contains { $0.hasPrefix("Showing 200 of 4,500 checks") }, "\(notes)")
    XCTAssertTrue(notes.contains { $0.contains("of 1500 marks drawn") }, "\(notes)")
    for path in page.all("path", classes: ["depth"]) {
      let points = Int(path.attributes["data-points"] ?? "") ?? .max
      XCTAssertLessThanOrEqual(points, 900, "downsampled to one step per pixel column")
    }
  }

  func testPerfettoExportStreamsInChunksAndHoldsOnlyWhatIsQueued() throws {
    var exporter = PerfettoExporter(output: ChunkCounter())
    var reader = LogReader()
    try reader.read([LogInput(path: Self.log.path)], into: &exporter)
    try exporter.finish()
    XCTAssertEqual(exporter.counts.slices, 60_000)
    XCTAssertGreaterThan(exporter.output.chunks, 10, "written while reading, not at the end")
    XCTAssertLessThan(exporter.output.largestChunk, 2 << 20)
    // About 2,000 objects wait at once (100 ms of enqueues every 50 µs), plus the survivors.
    XCTAssertLessThan(exporter.peakTrackedObjects, 3_000)
    let trace = TraceValidation(json: exporter.output.head + "]}")
    XCTAssertFalse(trace.events.isEmpty)
  }

  /// Counts chunks and keeps only the first one (enough to check the document's start).
  struct ChunkCounter: TraceOutput {
    var chunks = 0
    var largestChunk = 0
    var head = ""

    mutating func write(_ chunk: [UInt8]) throws(AnalysisError) {
      chunks += 1
      largestChunk = max(largestChunk, chunk.count)
      let text = String(decoding: chunk, as: UTF8.self)
      if head.isEmpty, let cut = text.range(of: ",\n", options: .backwards) {
        head = String(text[..<cut.lowerBound])
      }
    }

    mutating func finish() throws(AnalysisError) {}
  }
}

/// An output that fails: the failure stops the reading and reaches the caller.
final class FailingOutputTests: XCTestCase {
  struct Failing: TraceOutput {
    mutating func write(_ chunk: [UInt8]) throws(AnalysisError) {
      throw .outputUnwritable(path: "trace.json", reason: "disk full")
    }
    mutating func finish() throws(AnalysisError) {}
  }

  func testOutputFailureIsThrownAsAnAnalysisError() throws {
    var exporter = PerfettoExporter(output: Failing())
    var reader = LogReader()
    XCTAssertThrowsError(
      try {
        try reader.read([LogInput(path: Fixtures.path("feed.jsonl"))], into: &exporter)
        try exporter.finish()
      }()
    ) { error in
      XCTAssertEqual(
        error as? AnalysisError, .outputUnwritable(path: "trace.json", reason: "disk full"))
    }
  }
}
