import Foundation
import TestSupport
import Testing

/// Runs the built `dealloctrace` executable as a child process.
enum CLIRun {
  /// The repository root (the CLI runs there so that fixture paths print as in the goldens).
  static let root = PackageRoot.url

  /// The built executables sit next to the test bundle. `DEALLOCTRACE_TEST_CLI` names
  /// another build instead (to show that a test fails on the code before its fix).
  static var executable: URL {
    if let other = ProcessInfo.processInfo.environment["DEALLOCTRACE_TEST_CLI"] {
      return URL(fileURLWithPath: other)
    }
    return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      .deletingLastPathComponent()
      .appendingPathComponent("dealloctrace")
  }

  /// Runs `dealloctrace ARGUMENTS` in the repository root, feeding `input` on standard input.
  /// The child does not inherit the CI variables the tool reacts to (a test run inside a
  /// GitHub job must not append to that job's step summary); `environment` sets them.
  /// A child still running after `timeout` (a hang) is killed with SIGKILL, and the run
  /// reports status 128 + 9, so a hanging CLI fails its test instead of the whole run.
  /// `executable` replaces the CLI (a wrapper such as `/bin/sh -c …` that execs it).
  /// `clearing` names more variables the child must not inherit; `standardError` is where
  /// its standard error goes (its own pipe by default).
  static func run(
    _ arguments: [String], input: Data? = nil, environment extra: [String: String] = [:],
    clearing: [String] = [], standardError: ChildProcess.ErrorStream = .separate,
    timeout: Duration = .seconds(120), executable override: URL? = nil
  ) throws -> ChildRun {
    try #require(
      FileManager.default.isExecutableFile(atPath: executable.path),
      "\(executable.path) is not built; run `swift build --build-tests` first")
    return try ChildProcess(
      override ?? executable, arguments,
      environment: ChildEnvironment.inherited(
        clearing: ["GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"] + clearing, adding: extra),
      directory: root, input: input, standardError: standardError
    ).run(timeout: timeout)
  }

  /// A golden file's text.
  static func expected(_ name: String) throws -> String {
    try String(
      contentsOf: root.appendingPathComponent("fixtures/expected/\(name)"), encoding: .utf8)
  }
}
