import Foundation
import TestSupport
import Testing

/// Golden-file comparison for the test targets: one implementation of "compare with the
/// committed file, or re-record it", so every target records and reports the same way.
///
/// Re-record with `DEALLOCTRACE_RECORD_GOLDEN=1 swift test`. A recording run fails on
/// purpose, so that it can never pass by accident.
package enum GoldenFile {
  /// The package's root folder, where `fixtures/` lives.
  package static let packageRoot = PackageRoot.url

  /// Whether golden files are being re-recorded (`DEALLOCTRACE_RECORD_GOLDEN=1`).
  package static var recording: Bool {
    ProcessInfo.processInfo.environment["DEALLOCTRACE_RECORD_GOLDEN"] == "1"
  }

  /// Compares `actual` with the file at `path` (relative to the package root) and records an
  /// issue naming the first line that differs; when recording, writes the file instead.
  package static func assertMatches(
    _ actual: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let url = packageRoot.appendingPathComponent(path)
    if recording {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(actual.utf8).write(to: url)
      Issue.record(
        "recorded \(path); unset DEALLOCTRACE_RECORD_GOLDEN and run again",
        sourceLocation: sourceLocation)
      return
    }
    guard let data = FileManager.default.contents(atPath: url.path) else {
      Issue.record(
        "missing golden file \(path); run with DEALLOCTRACE_RECORD_GOLDEN=1",
        sourceLocation: sourceLocation)
      return
    }
    let expected = String(decoding: data, as: UTF8.self)
    guard expected != actual else { return }
    let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
    let got = actual.split(separator: "\n", omittingEmptySubsequences: false)
    let line =
      zip(want, got).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      ?? min(want.count, got.count)
    Issue.record(
      """
      \(path) differs at line \(line + 1):
        expected: \(line < want.count ? String(want[line]) : "<end>")
        actual:   \(line < got.count ? String(got[line]) : "<end>")
      """, sourceLocation: sourceLocation)
  }
}
