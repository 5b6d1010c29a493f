import Foundation
import TestSupport
import XCTest

/// Runs the `TraceProbe` example, built beside the test bundle, as a child process.
enum ProbeRun {
  /// The built executables sit next to the test bundle.
  static var probeURL: URL {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return executable.deletingLastPathComponent().appendingPathComponent("TraceProbe")
  }

  /// Runs the probe (or `executable`) to completion; one still running after `timeout` is
  /// killed, and fails the test.
  static func run(
    _ arguments: [String] = [], environment: [String: String] = [:],
    directory: URL? = nil, timeout: Duration = .seconds(60), executable: URL = probeURL,
    file: StaticString = #filePath, line: UInt = #line
  ) throws -> ChildRun {
    let run = try launch(
      arguments, environment: environment, directory: directory, executable: executable
    ).wait(timeout: timeout)
    if run.timedOut {
      XCTFail(
        "\(executable.lastPathComponent) \(arguments) did not finish within \(timeout)",
        file: file, line: line)
    }
    return run
  }

  /// Starts the probe; the test signals it or waits for it.
  static func launch(
    _ arguments: [String], environment: [String: String], directory: URL? = nil,
    executable: URL = probeURL
  ) throws -> RunningChild {
    try ChildProcess(
      executable, arguments,
      environment: ChildEnvironment.inherited(clearing: ["TRACE_PROBE_EXIT"], adding: environment),
      directory: directory
    ).start()
  }
}
