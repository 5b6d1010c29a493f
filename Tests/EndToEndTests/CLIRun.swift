import Foundation
import TestSupport
import Testing

/// One run of the built `dealloctrace` executable as a child process.
struct CLIRun {
  var status: Int32
  var standardOutput: String
  var standardError: String

  /// The repository root (the CLI runs there so that fixture paths print as in the goldens).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

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
  /// A child still running after `timeout` seconds (a hang) is killed with SIGKILL, and the
  /// run reports status 128 + 9, so a hanging CLI fails its test instead of the whole run.
  /// `executable` replaces the CLI (a wrapper such as `/bin/sh -c …` that execs it).
  static func run(
    _ arguments: [String], input: Data? = nil, environment extra: [String: String] = [:],
    timeout: Double = 120, executable override: URL? = nil
  ) throws -> CLIRun {
    try #require(
      FileManager.default.isExecutableFile(atPath: executable.path),
      "\(executable.path) is not built; run `swift build --build-tests` first")
    let process = Process()
    process.executableURL = override ?? executable
    process.arguments = arguments
    process.currentDirectoryURL = root
    process.environment = ChildEnvironment.inherited(
      clearing: ["GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"], adding: extra)
    let output = Pipe()
    // Standard error goes to a file, so that only one pipe needs draining here.
    let errorURL = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errorURL) }
    let error = try FileHandle(forWritingTo: errorURL)
    defer { try? error.close() }
    let stdin = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    if let input {
      // Write from another thread so that a child blocked on a full stdout pipe cannot
      // deadlock the test.
      let writer = stdin.fileHandleForWriting
      DispatchQueue.global().async {
        writer.write(input)
        try? writer.close()
      }
    }
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    watchdog.cancel()
    let status =
      process.terminationReason == .uncaughtSignal
      ? 128 + process.terminationStatus : process.terminationStatus
    let errorData = try Data(contentsOf: errorURL)
    return CLIRun(
      status: status,
      standardOutput: String(decoding: outputData, as: UTF8.self),
      standardError: String(decoding: errorData, as: UTF8.self))
  }

  /// A golden file's text.
  static func expected(_ name: String) throws -> String {
    try String(
      contentsOf: root.appendingPathComponent("fixtures/expected/\(name)"), encoding: .utf8)
  }

  /// The error lines (no Swift stack trace, no crash report).
  var errorLines: [String] { standardError.split(separator: "\n").map(String.init) }
}
