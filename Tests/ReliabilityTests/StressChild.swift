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
      throw XCTSkip("\(url.path) is not built; run `swift build --build-tests` first")
    }
    return url
  }

  /// Runs `StressChild arguments…` to completion, with `environment` added to the cleared
  /// one (`ChildEnvironment`). No timeout: a million-object stress run on a loaded machine
  /// takes minutes, and its test waits for it.
  static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildRun {
    try ChildProcess(
      executable(), arguments, environment: ChildEnvironment.inherited(adding: environment)
    ).start().wait()
  }
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
