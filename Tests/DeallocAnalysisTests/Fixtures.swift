import DeallocAnalysis
import Foundation
import Testing

/// The repository's `fixtures/` folder and golden-file comparison.
enum Fixtures {
  /// The repository root, from this file's path (tests run from any directory).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  static func path(_ name: String) -> String {
    root.appendingPathComponent("fixtures/\(name)").path
  }

  /// An input named `fixtures/NAME` in messages, whatever the checkout's location.
  static func input(_ name: String) -> LogInput {
    LogInput(path: path(name), displayName: "fixtures/\(name)")
  }

  /// Analyses fixtures as the CLI would, with repository-relative names.
  static func report(_ names: [String], options: AnalysisOptions = AnalysisOptions()) throws
    -> Report
  {
    let inputs = names.map(input)
    var reader = LogReader()
    var analyzer = Analyzer(options: options)
    try reader.read(inputs, into: &analyzer)
    return analyzer.finish(inputs: inputs.map(\.displayName))
  }

  /// Whether golden files are being re-recorded (`DEALLOCTRACE_RECORD_GOLDEN=1`).
  static var recording: Bool {
    ProcessInfo.processInfo.environment["DEALLOCTRACE_RECORD_GOLDEN"] == "1"
  }

  /// Compares `actual` with `fixtures/expected/NAME`. When recording, writes it and fails,
  /// so that a recording run can never pass by accident.
  static func assertGolden(
    _ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let url = root.appendingPathComponent("fixtures/expected/\(name)")
    if recording {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(actual.utf8).write(to: url)
      Issue.record(
        "recorded \(name); unset DEALLOCTRACE_RECORD_GOLDEN and run again",
        sourceLocation: sourceLocation)
      return
    }
    guard let data = FileManager.default.contents(atPath: url.path) else {
      Issue.record(
        "missing golden file fixtures/expected/\(name); run with DEALLOCTRACE_RECORD_GOLDEN=1",
        sourceLocation: sourceLocation)
      return
    }
    let expected = String(decoding: data, as: UTF8.self)
    if expected != actual {
      let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
      let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
      let common = min(expectedLines.count, actualLines.count)
      let first = (0..<common).first { expectedLines[$0] != actualLines[$0] } ?? common
      let want = first < expectedLines.count ? String(expectedLines[first]) : "<end>"
      let got = first < actualLines.count ? String(actualLines[first]) : "<end>"
      Issue.record(
        "fixtures/expected/\(name) differs at line \(first + 1):\n  expected: \(want)\n  actual:   \(got)",
        sourceLocation: sourceLocation)
    }
  }
}
