import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import XCTest

/// Replays every input in `fixtures/fuzz-regressions/` through the reader, the analyzer and
/// the renderers, as the fuzz target does, and through `explain` and the Perfetto exporter:
/// none may crash, and unusable input must come out as one line that names the input.
final class FuzzRegressionTests: XCTestCase {
  private static let directory = PackageRoot.appending("fixtures/fuzz-regressions")

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
      let report = try Self.report(name)
      XCTAssertEqual(report.summary.sessions, 1, name)
      let malformed = report.warnings.filter { $0.kind == .malformedLine }
      XCTAssertFalse(malformed.isEmpty, name)
      XCTAssertTrue(
        malformed.allSatisfy { $0.message.contains("out of range") }, "\(name): \(malformed)")
    }
  }

  /// The hand-written probes also pin what the reader and the analyzer make of them, so that
  /// "does not crash" cannot hide "silently reads nothing".
  func testProbesAreReadWithWarningsNotErrors() throws {
    var report = try Self.report("inconsistent-ids.jsonl")
    XCTAssertEqual(report.summary.sessions, 1)
    let inconsistent = report.warnings.filter { $0.kind == .inconsistentRecord }.map(\.message)
    XCTAssertTrue(
      inconsistent.contains { $0.hasPrefix("release of id 7,") }, "\(inconsistent)")
    XCTAssertTrue(
      inconsistent.contains { $0.hasPrefix("enqueue reuses id 1,") }, "\(inconsistent)")

    report = try Self.report("cut-unicode-escape.jsonl")
    XCTAssertEqual(report.summary.sessions, 1)
    XCTAssertTrue(
      report.warnings.contains { $0.kind == .truncatedLine }, "the cut-off last line is reported")

    report = try Self.report("records-without-session.jsonl")
    XCTAssertEqual(report.summary.sessions, 2)
    XCTAssertTrue(report.warnings.contains { $0.kind == .recordBeforeSession })

    report = try Self.report("binary-garbage.bin")
    XCTAssertEqual(report.summary.sessions, 1)
    XCTAssertTrue(report.warnings.contains { $0.kind == .malformedLine })
  }

  private static func report(_ name: String) throws -> Report {
    try DeallocAnalysis.analyze([directory.appendingPathComponent(name).path])
  }
}
