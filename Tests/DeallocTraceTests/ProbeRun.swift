import Dispatch
import Foundation
import TestSupport
import XCTest

/// One run of the `TraceProbe` example as a child process, and what it left behind.
struct ProbeRun {
  var status: Int32
  var standardOutput: String
  var standardError: String

  /// The non-empty lines the child wrote on stderr.
  var errorLines: [String] {
    standardError.split(separator: "\n").map(String.init)
  }

  /// The built executables sit next to the test bundle.
  static var probeURL: URL {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return executable.deletingLastPathComponent().appendingPathComponent("TraceProbe")
  }

  /// Runs the probe (or `executable`) to completion (killed after `timeout` seconds).
  static func run(
    _ arguments: [String] = [], environment: [String: String] = [:],
    directory: URL? = nil, timeout: TimeInterval = 60, executable: URL = probeURL
  ) throws -> ProbeRun {
    let probe = try launch(
      arguments, environment: environment, directory: directory, executable: executable)
    if probe.exited.wait(timeout: .now() + timeout) == .timedOut {
      kill(probe.process.processIdentifier, SIGKILL)
      XCTFail("\(executable.lastPathComponent) \(arguments) did not finish within \(timeout) s")
    }
    return probe.finish()
  }

  static func launch(
    _ arguments: [String], environment: [String: String], directory: URL? = nil,
    executable: URL = probeURL
  ) throws -> RunningProbe {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ChildEnvironment.inherited(
      clearing: ["TRACE_PROBE_EXIT"], adding: environment)
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    // Both pipes are read while the child runs: one it filled would block it.
    return RunningProbe(
      process: process, exited: exited, output: PipeDrain(output.fileHandleForReading),
      error: PipeDrain(error.fileHandleForReading))
  }
}

/// A probe that is still running.
struct RunningProbe {
  let process: Process
  /// Signalled when the child has exited.
  let exited: DispatchSemaphore
  let output: PipeDrain
  let error: PipeDrain

  /// Waits until stdout has the line `line` (false when the child closed stdout first).
  func waitForLine(_ line: String) -> Bool {
    output.wait { String(decoding: $0, as: UTF8.self).contains(line + "\n") }
  }

  func finish() -> ProbeRun {
    process.waitUntilExit()
    return ProbeRun(
      status: process.terminationStatus,
      standardOutput: String(decoding: output.wait(), as: UTF8.self),
      standardError: String(decoding: error.wait(), as: UTF8.self))
  }
}

/// A parsed log: every complete line as a JSON object, and whether the last was cut.
struct ParsedLog {
  var records: [[String: Any]] = []
  var truncatedTail = false

  init(contentsOf url: URL, file: StaticString = #filePath, line: UInt = #line) throws {
    let data = try Data(contentsOf: url)
    let text = String(decoding: data, as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.last == "" {
      lines.removeLast()
    } else if !lines.isEmpty {
      truncatedTail = true
      lines.removeLast()
    }
    for (index, text) in lines.enumerated() {
      let object = try? JSONSerialization.jsonObject(with: Data(text.utf8))
      guard let record = object as? [String: Any] else {
        XCTFail("\(url.path):\(index + 1): not a JSON object: \(text)", file: file, line: line)
        continue
      }
      records.append(record)
    }
  }

  func kind(_ kind: String) -> [[String: Any]] {
    records.filter { $0["ev"] as? String == kind }
  }

  /// The shared validator's verdict on `url` (`ContractValidator`).
  static func validatorVerdict(
    for url: URL, file: StaticString = #filePath, line: UInt = #line
  ) -> (status: Int32, output: String)? {
    ContractValidator.verdict(for: url, file: file, line: line)
  }
}

/// A fresh directory per test, removed afterwards.
func makeScratchDirectory() throws -> URL {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("dealloctrace-tests-\(getpid())-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}
