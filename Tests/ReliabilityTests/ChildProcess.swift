import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// A run of the `StressChild` executable, built next to this test bundle.
struct ChildProcess {
  var status: Int32
  var standardOutput: String
  var standardError: String

  /// The built `StressChild` (SwiftPM puts executables beside the test bundle).
  static func executable(_ name: String = "StressChild") throws -> URL {
    let testBinary = try XCTUnwrap(Bundle.main.executablePath, "no path for the test binary")
    let url = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
      .appendingPathComponent(name)
    guard FileManager.default.isExecutableFile(atPath: url.path) else {
      throw XCTSkip("\(url.path) is not built; run `swift build --build-tests` first")
    }
    return url
  }

  /// The environment a child gets: this process's, without tracing variables (so that a
  /// traced test run never lends its log to a child), plus `extra`.
  static func environment(_ extra: [String: String] = [:]) -> [String: String] {
    ChildEnvironment.inherited(adding: extra)
  }

  /// Runs `StressChild arguments…` to completion.
  static func run(_ arguments: [String], environment extra: [String: String] = [:]) throws
    -> ChildProcess
  {
    let process = Process()
    process.executableURL = try executable()
    process.arguments = arguments
    process.environment = environment(extra)
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // Read both pipes to the end concurrently, so that neither can fill up and block the child.
    let errorData = PipeDrain(error.fileHandleForReading)
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ChildProcess(
      status: process.terminationStatus,
      standardOutput: String(decoding: outputData, as: UTF8.self),
      standardError: String(decoding: errorData.wait(), as: UTF8.self))
  }

  /// The ThreadSanitizer reports in the child's stderr (present when the tests run under
  /// `--sanitize=thread`, which instruments the child too).
  var sanitizerReports: [Substring] {
    standardError.split(separator: "\n").filter {
      $0.contains("ThreadSanitizer:") || $0.contains("AddressSanitizer:")
    }
  }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct ScratchDirectory {
  let path: String

  init(_ name: String) throws {
    let template = NSTemporaryDirectory() + "reliability-\(name)-XXXXXX"
    var bytes = Array(template.utf8CString)
    guard let made = mkdtemp(&bytes) else {
      throw XCTSkip("mkdtemp failed for \(template)")
    }
    path = String(cString: made)
  }

  func file(_ name: String) -> String { path + "/" + name }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}
