import DeallocAnalysis
import DeallocLog
import Foundation
import GoldenFiles
import TestSupport
import Testing

/// The repository's `fixtures/` folder and golden-file comparison.
enum Fixtures {
  /// The repository root, from this file's path (tests run from any directory).
  static let root = PackageRoot.url

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

  /// Compares `actual` with `fixtures/expected/NAME` (see `GoldenFile`).
  static func assertGolden(
    _ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    try GoldenFile.assertMatches(
      actual, "fixtures/expected/\(name)", sourceLocation: sourceLocation)
  }
}
