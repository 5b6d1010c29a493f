import Foundation
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

  /// Runs the probe to completion (killed after `timeout` seconds).
  static func run(
    _ arguments: [String] = [], environment: [String: String] = [:],
    directory: URL? = nil, timeout: TimeInterval = 60, executable: URL? = nil
  ) throws -> ProbeRun {
    let process = try launch(
      arguments, environment: environment, directory: directory, executable: executable)
    let deadline = Date().addingTimeInterval(timeout)
    while process.process.isRunning && Date() < deadline {
      usleep(10_000)
    }
    if process.process.isRunning {
      kill(process.process.processIdentifier, SIGKILL)
      XCTFail("TraceProbe \(arguments) did not finish within \(timeout) s")
    }
    process.process.waitUntilExit()
    return process.finish()
  }

  /// - Parameter executable: another build of the probe (the release one); the debug
  ///   build beside the test bundle by default.
  static func launch(
    _ arguments: [String], environment: [String: String], directory: URL? = nil,
    executable: URL? = nil
  ) throws -> RunningProbe {
    let process = Process()
    process.executableURL = executable ?? probeURL
    process.arguments = arguments
    var inherited = ProcessInfo.processInfo.environment
    for name in [
      "DEALLOCTRACE_LOG", "DEALLOCTRACE", "DEALLOCTRACE_FRAMES", "DEALLOCTRACE_HOLDERS",
      "TRACE_PROBE_EXIT",
    ] {
      inherited[name] = nil
    }
    process.environment = inherited.merging(environment) { $1 }
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    return RunningProbe(process: process, output: output, error: error)
  }
}

/// A probe that is still running.
struct RunningProbe {
  let process: Process
  let output: Pipe
  let error: Pipe

  /// Reads stdout until `line` appears (or the child exits).
  func waitForLine(_ line: String) -> Bool {
    var seen = Data()
    while true {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { return false }
      seen.append(chunk)
      if String(decoding: seen, as: UTF8.self).contains(line + "\n") { return true }
    }
  }

  func finish() -> ProbeRun {
    process.waitUntilExit()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    return ProbeRun(
      status: process.terminationStatus,
      standardOutput: String(decoding: out, as: UTF8.self),
      standardError: String(decoding: err, as: UTF8.self))
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

  /// Runs the shared validator when it and python3 are there; nil when they are not. In
  /// CI (`CI=true`) their absence is a failure, not a skip: a contract check that silently
  /// stops running is worse than none.
  static func validatorVerdict(
    for url: URL, file: StaticString = #filePath, line: UInt = #line
  ) -> (status: Int32, output: String)? {
    // The contract's validator sits in `shared/`, beside the checkout (as in CI).
    let packageRoot = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let validator = packageRoot.deletingLastPathComponent()
      .appendingPathComponent("shared/tools/validate-log")
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let python, FileManager.default.fileExists(atPath: validator.path) else {
      if isCI {
        XCTFail(
          "CI=true but the contract validator cannot run: "
            + (python == nil ? "no python3" : "no \(validator.path)"), file: file, line: line)
      }
      return nil
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [validator.path, url.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    guard (try? process.run()) != nil else {
      if isCI {
        XCTFail("CI=true but \(python) \(validator.path) did not start", file: file, line: line)
      }
      return nil
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
  }
}

/// Whether the tests run in CI, where a check that cannot run must fail instead of skip.
var isCI: Bool {
  ProcessInfo.processInfo.environment["CI"] == "true"
}

/// A fresh directory per test, removed afterwards.
func makeScratchDirectory() throws -> URL {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("dealloctrace-tests-\(getpid())-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}
