import Foundation
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
}
