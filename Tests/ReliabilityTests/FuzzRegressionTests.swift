import DeallocAnalysis
import DeallocLog
import Foundation
import XCTest

/// Replays every input in `fixtures/fuzz-regressions/` through the reader, the analyzer and
/// the renderers, as the fuzz target does, and through `explain` and the Perfetto exporter:
/// none may crash, and unusable input must come out as one line that names the input.
final class FuzzRegressionTests: XCTestCase {
  private static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("fixtures/fuzz-regressions")

  func testEveryFuzzRegressionIsReadWithoutCrashing() throws {
    let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path)
      .filter { !$0.hasPrefix("README") }.sorted()
    XCTAssertFalse(names.isEmpty, "no regression inputs in \(Self.directory.path)")
    let renderers: [any ReportRenderer] = [
      TextRenderer(), JSONRenderer(), MarkdownRenderer(), HTMLRenderer(),
    ]
    for name in names {
      let path = Self.directory.appendingPathComponent(name).path
      var reader = LogReader()
      var analyzer = Analyzer()
      do {
        try reader.read(LogInput(path: path), into: &analyzer)
      } catch {
        XCTAssertTrue(error.description.contains(path), "\(name): \(error.description)")
        XCTAssertFalse(error.description.contains("\n"), "\(name): one line")
      }
      let report = analyzer.finish(inputs: [path])
      for renderer in renderers {
        XCTAssertFalse(renderer.render(report).isEmpty, "\(name): \(type(of: renderer))")
      }
      try replayThroughExplainAndExport(path, name)
    }
  }

  /// `explain` (by type, address and id, which the probes use) and `export --format perfetto`.
  private func replayThroughExplainAndExport(_ path: String, _ name: String) throws {
    for selector in ["A", "0x1", "1"] {
      var collector = ObjectHistoryCollector(ObjectSelector(selector))
      var reader = LogReader()
      do {
        try reader.read(LogInput(path: path), into: &collector)
      } catch {
        XCTAssertFalse(error.description.contains("\n"), "\(name): one line")
        continue
      }
      let text = ExplainRenderer().render(
        collector.histories, selector: collector.selector, omitted: collector.omitted)
      XCTAssertFalse(text.isEmpty, "\(name): explain \(selector)")
    }
    var exporter = PerfettoExporter(output: StringTraceOutput())
    var reader = LogReader()
    do {
      try reader.read(LogInput(path: path), into: &exporter)
    } catch {
      XCTAssertFalse(error.description.contains("\n"), "\(name): one line")
      return
    }
    try exporter.finish()
    XCTAssertTrue(exporter.output.text.hasPrefix("{\"traceEvents\":["), "\(name): export")
  }

  /// Times and counts past ``LogLimits`` (which sums and differences of times would overflow)
  /// are malformed lines, not traps: the records that carry them are skipped with a warning.
  func testOutOfRangeTimesAndCountsAreMalformedLines() throws {
    for name in [
      "time-overflow-enqueue-release.jsonl", "time-overflow-same-queue.jsonl",
      "time-overflow-check.jsonl", "time-overflow-dealloc.jsonl", "time-overflow-age.jsonl",
      "depth-overflow.jsonl",
    ] {
      let tally = try LogTally.read(Self.directory.appendingPathComponent(name).path)
      XCTAssertEqual(tally.sessions.count, 1, name)
      let malformed = tally.warnings.filter { $0.kind == .malformedLine }
      XCTAssertFalse(malformed.isEmpty, name)
      XCTAssertTrue(
        malformed.allSatisfy { $0.message.contains("out of range") }, "\(name): \(malformed)")
    }
  }

  /// The hand-written probes also pin what the reader makes of them, so that "does not
  /// crash" cannot hide "silently reads nothing".
  func testProbesAreReadWithWarningsNotErrors() throws {
    var tally = try LogTally.read(
      Self.directory.appendingPathComponent("inconsistent-ids.jsonl").path)
    XCTAssertEqual(tally.sessions.count, 1)
    XCTAssertGreaterThanOrEqual(tally.releasesOfUnknownIDs, 1)
    XCTAssertEqual(tally.duplicateEnqueues, 1)

    tally = try LogTally.read(
      Self.directory.appendingPathComponent("cut-unicode-escape.jsonl").path)
    XCTAssertEqual(tally.sessions.count, 1)
    XCTAssertTrue(
      tally.warnings.contains { $0.kind == .truncatedLine }, "the cut-off last line is reported")

    tally = try LogTally.read(
      Self.directory.appendingPathComponent("records-without-session.jsonl").path)
    XCTAssertEqual(tally.sessions.count, 2)
    XCTAssertTrue(tally.warnings.contains { $0.kind == .recordBeforeSession })

    tally = try LogTally.read(Self.directory.appendingPathComponent("binary-garbage.bin").path)
    XCTAssertEqual(tally.sessions.count, 1)
    XCTAssertTrue(tally.warnings.contains { $0.kind == .malformedLine })
  }
}
