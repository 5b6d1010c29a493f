import Foundation
import TestSupport
import XCTest

/// Tracing must leave the host process as it was: the log's descriptor does not leak into
/// programs it runs, and linking the recorder does not swap the host's unwinders.
final class HostProcessTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  func testTheLogDescriptorIsCloseOnExecAndAnExecdChildDoesNotInheritIt() throws {
    let log = directory.appendingPathComponent("fd.jsonl")
    let run = try ProbeRun.run(["descriptor"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    let header = try XCTUnwrap(lines.first, run.standardOutput)
    let octal = try XCTUnwrap(header.split(separator: " ").last, header)
    let flags = try XCTUnwrap(Int(octal, radix: 8), header)
    XCTAssertNotEqual(flags & 0o2_000_000, 0, "O_CLOEXEC: \(header)")
    XCTAssertNotEqual(flags & 0o2000, 0, "O_APPEND: \(header)")
    XCTAssertNotEqual(flags & 0o400_000, 0, "O_NOFOLLOW: \(header)")
    XCTAssertEqual(flags & 0o4000, 0, "O_NONBLOCK is only for the open: \(header)")
    let childListing = lines.drop { $0 != "child fds:" }.dropFirst()
    XCTAssertTrue(childListing.contains { $0.contains("/proc/") }, run.standardOutput)
    XCTAssertFalse(
      childListing.contains { $0.contains(log.path) }, "the child inherited the log: \(lines)")
  }

  /// libunwind exports a weak `backtrace` and the `_Unwind_*` family; linked into the host,
  /// it would come before glibc and libgcc in the lookup order and replace both (C++
  /// exceptions included). The recorder loads it privately instead.
  func testGlibcBacktraceAndLibgccUnwindStayTheHostsAndStillWork() throws {
    let log = directory.appendingPathComponent("unwinders.jsonl")
    let run = try ProbeRun.run(["unwinders"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let lines = run.standardOutput.split(separator: "\n").map(String.init)
    XCTAssertEqual(lines.count, 2, run.standardOutput)
    // Under `--sanitize=thread` the sanitizer's own `backtrace` interceptor, linked into
    // the executable, comes first: that is the host's choice, not the recorder's.
    let expected = [["libc.so.6", "TraceProbe"], ["libgcc_s.so.1"]]
    for (line, libraries) in zip(lines, expected) {
      XCTAssertFalse(line.contains("libunwind"), line)
      XCTAssertTrue(libraries.contains { line.contains(" from \($0) ") }, line)
      let frames = Int(line.split(separator: " ").last ?? "") ?? 0
      XCTAssertGreaterThan(frames, 2, line)
    }
    // And the recorder's own backtraces still work.
    let stacks = try ParsedLog(contentsOf: log).kind("stack")
    XCTAssertFalse(stacks.isEmpty)
  }
}
