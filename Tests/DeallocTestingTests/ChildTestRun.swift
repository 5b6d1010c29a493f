import Foundation
import TestSupport
import XCTest

/// One run of this test binary as a child process, with some of its tests selected.
struct ChildTestRun {
  var status: Int32
  /// Standard output and standard error, interleaved as written.
  var output: String

  enum Library: String {
    case xctest
    case swiftTesting = "swift-testing"
  }

  /// Runs the tests matching `filter` of `library` in a child copy of this binary, with
  /// the leak samples enabled and `environment` added.
  static func run(
    _ library: Library,
    filter: String,
    environment: [String: String] = [:],
    extraArguments: [String] = []
  ) throws -> ChildTestRun {
    let selection =
      switch library {
      case .xctest: ["--testing-library", "xctest", filter]
      case .swiftTesting: ["--testing-library", "swift-testing", "--filter", filter]
      }
    let arguments = selection + extraArguments
    // The samples leak on purpose: they must not land in the parent's trace log, which a
    // CI job gates on. Only `environment` turns tracing on for a child.
    let run = try ChildProcess(
      testBinary(), arguments,
      environment: ChildEnvironment.inherited(
        adding: ["DEALLOCTESTING_SAMPLES": "1", "NO_COLOR": "1"].merging(environment) { $1 }),
      standardError: .mergedIntoOutput
    ).start().wait()
    return ChildTestRun(status: run.status, output: run.standardOutput)
  }

  /// The running test binary (`…PackageTests.xctest` on Linux).
  private static func testBinary() throws -> URL {
    let path = try XCTUnwrap(Bundle.main.executablePath, "no executable path for this process")
    return URL(fileURLWithPath: path)
  }
}
