import Foundation
import TestSupport
import XCTest

/// The child runner itself: a child's output reaches the test however much there is.
final class ProbeRunTests: XCTestCase {
  /// 200 KB on stdout, then on stderr. A runner that reads only after the child exits leaves
  /// it blocked on the full pipe (64 KiB) until the timeout kills it.
  func testAChildWritingMoreThanAPipeHoldsRunsToItsEndWithAllItsOutput() throws {
    for stream in ["", ">&2"] {
      // `exec`: one process holds the pipe, so the timeout's kill closes it.
      let run = try ProbeRun.run(
        ["-c", "exec head -c 200000 /dev/zero \(stream)"], timeout: .seconds(20),
        executable: URL(fileURLWithPath: "/bin/sh"))
      let (written, other) =
        stream.isEmpty
        ? (run.standardOutput, run.standardError) : (run.standardError, run.standardOutput)
      XCTAssertEqual(run.status, 0, stream)
      XCTAssertEqual(written.utf8.count, 200_000, stream)
      XCTAssertTrue(written.utf8.allSatisfy { $0 == 0 }, stream)
      XCTAssertEqual(other, "", stream)
    }
  }

  /// A child killed by a signal is not mistaken for one that exited with that number.
  func testASignalIsReportedApartFromAnExitStatus() throws {
    let shell = URL(fileURLWithPath: "/bin/sh")
    let killed = try ProbeRun.run(["-c", "kill -9 $$"], timeout: .seconds(20), executable: shell)
    XCTAssertEqual(killed.signal, SIGKILL)
    XCTAssertNil(killed.exitStatus)
    XCTAssertEqual(killed.status, 128 + SIGKILL)
    let exited = try ProbeRun.run(["-c", "exit 9"], timeout: .seconds(20), executable: shell)
    XCTAssertEqual(exited.exitStatus, 9)
    XCTAssertNil(exited.signal)
  }

  /// A child inherits no descriptor beyond 0, 1 and 2, even one this process opened without
  /// close-on-exec: a file another parallel test still writes would otherwise stay open in
  /// the child, and that test's exec of it fails (ETXTBSY).
  func testAChildInheritsOnlyStandardDescriptors() throws {
    let leaked = open("/dev/null", O_RDONLY)  // no O_CLOEXEC, on purpose
    XCTAssertGreaterThan(leaked, 2)
    defer { close(leaked) }
    let run = try ProbeRun.run(
      ["-c", "test -e /proc/self/fd/\(leaked) && echo inherited || echo closed"],
      timeout: .seconds(20), executable: URL(fileURLWithPath: "/bin/sh"))
    XCTAssertEqual(run.status, 0)
    XCTAssertEqual(run.standardOutput, "closed\n")
  }

  /// A child killed at its timeout whose descendant still holds its output (a background
  /// process, a browser's helpers): the runner gives up on the pipe after its bound and says
  /// so, instead of waiting as long as the descendant lives.
  func testADescendantHoldingTheOutputEndsTheWaitWithAMessage() throws {
    let child = try ProbeRun.launch(
      ["-c", "sleep 60 & echo $!; exec sleep 60"], environment: [:],
      executable: URL(fileURLWithPath: "/bin/sh"))
    XCTAssertTrue(
      child.output.wait(until: { $0.last == UInt8(ascii: "\n") }, deadline: testWaitDeadline))
    let run = child.wait(timeout: .milliseconds(100), outputBound: .milliseconds(100))
    if let descendant = pid_t(run.standardOutput.split(separator: "\n").first ?? "") {
      kill(descendant, SIGKILL)
    }
    XCTAssertTrue(run.timedOut)
    XCTAssertEqual(run.signal, SIGKILL)
    XCTAssertTrue(
      run.standardError.hasSuffix(
        "[test harness] sh was killed after 0.1 seconds: it did not finish\n"),
      "standard error: \(run.standardError)")
  }
}
