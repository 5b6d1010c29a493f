import Foundation
import TestSupport
import XCTest

/// Runs Debian's `chromium` headless on a local file, for the tests that need a real browser.
///
/// Skipped only when chromium is absent and `CI` is unset: in CI the browser test must run.
struct HeadlessChromium {
  let executable: URL

  /// The browser on `PATH`, or a skip (outside CI) or a failure (in CI) when there is none.
  static func require() throws -> HeadlessChromium {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      for name in ["chromium", "chromium-browser"] {
        let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) {
          return HeadlessChromium(executable: candidate)
        }
      }
    }
    if ProcessInfo.processInfo.environment["CI"] == nil {
      throw XCTSkip(
        "chromium is not installed (apt-get install -y chromium); the browser test runs in CI")
    }
    XCTFail("CI is set but chromium is not installed: scripts/setup must install it")
    throw XCTSkip("chromium missing")
  }

  /// The DOM after the page loaded and its scripts ran, and what the browser logged.
  /// `size` is the window's (width, height in CSS pixels), for a layout to measure.
  func dumpDOM(of file: URL, size: (Int, Int)? = nil) throws -> (dom: String, log: String) {
    let window = size.map { ["--window-size=\($0.0),\($0.1)"] } ?? []
    let output = try run(window + ["--dump-dom", file.absoluteString])
    return (output.stdout, output.stderr)
  }

  /// Saves a PNG of the page at `size` (width, height in CSS pixels).
  func screenshot(of file: URL, to png: URL, size: (Int, Int)) throws {
    _ = try run([
      "--screenshot=\(png.path)", "--window-size=\(size.0),\(size.1)", "--hide-scrollbars",
      file.absoluteString,
    ])
  }

  private func run(_ arguments: [String]) throws -> (stdout: String, stderr: String) {
    let profile = try ScratchDirectory("chromium")
    defer { profile.remove() }
    var flags = [
      "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
      "--user-data-dir=\(profile.path)", "--enable-logging=stderr", "--v=0",
    ]
    if getuid() == 0 { flags.append("--no-sandbox") }
    let run = try ChildProcess(executable, flags + arguments).start().wait()
    guard run.status == 0 else {
      throw ChromiumFailure(status: run.status, stderr: run.standardError)
    }
    return (run.standardOutput, run.standardError)
  }

  struct ChromiumFailure: Error, CustomStringConvertible {
    var status: Int32
    var stderr: String
    var description: String { "chromium exited with \(status): \(stderr.suffix(2000))" }
  }
}
