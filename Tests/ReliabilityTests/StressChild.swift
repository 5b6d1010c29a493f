import Foundation
import TestSupport
import XCTest

/// Runs the `StressChild` executable, built next to this test bundle.
enum StressChild {
  /// The built `StressChild` (SwiftPM puts executables beside the test bundle).
  static func executable() throws -> URL {
    let testBinary = try XCTUnwrap(Bundle.main.executablePath, "no path for the test binary")
    let url = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
      .appendingPathComponent("StressChild")
    guard FileManager.default.isExecutableFile(atPath: url.path) else {
      let problem = "\(url.path) is not built; run `swift build --build-tests` first"
      // In CI a missing child is a broken build, not a reason to pass without testing.
      if ProcessInfo.processInfo.environment["CI"] != nil { throw MissingChild(problem) }
      throw XCTSkip(problem)
    }
    return url
  }

  /// Runs `StressChild arguments…` to completion, with `environment` added to the cleared
  /// one (`ChildEnvironment`). A million-object stress run on a loaded machine takes
  /// minutes, so the bound is the runner's default, not a short one.
  static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildRun {
    try ChildProcess(
      executable(), arguments, environment: ChildEnvironment.inherited(adding: environment)
    ).start().wait()
  }
}

/// A child binary that should have been built with the tests and was not.
struct MissingChild: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

extension ChildRun {
  /// The ThreadSanitizer reports in the child's stderr (present when the tests run under
  /// `--sanitize=thread`, which instruments the child too).
  var sanitizerReports: [Substring] {
    standardError.split(separator: "\n").filter {
      $0.contains("ThreadSanitizer:") || $0.contains("AddressSanitizer:")
    }
  }
}
