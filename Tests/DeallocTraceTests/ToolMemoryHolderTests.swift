import Foundation
import TestSupport
import XCTest

/// The tool's own memory is never a holder (issue 28 item 3): both ends of a cycle tracked
/// by one `LeakTracker`, in a child built in debug and in release. The tracker holds the
/// first finding's holder path (with the objects' addresses) while it scans for the second,
/// and the recorder and the registry hold addresses of their own: none may be named.
final class ToolMemoryHolderTests: XCTestCase {
  func testBothEndsOfACycleNameOnlyTheCycleInDebugAndRelease() throws {
    for build in [ProbeBuild.debug, .release] {
      let run = try ProbeRun.run(
        ["both-ends"], environment: ["DEALLOCTRACE_HOLDERS": "1"],
        executable: try build.executable())
      XCTAssertEqual(run.status, 0, "\(build): \(run.standardOutput)")
      let output = run.standardOutput
      XCTAssertTrue(output.contains("findings: 2"), "\(build): \(output)")
      let cycle = "retain cycle: TraceProbe.CycleEnd.next → TraceProbe.CycleEnd.next → "
      XCTAssertEqual(
        output.components(separatedBy: cycle).count - 1, 2, "\(build): \(output)")
      for own in ["DeallocTesting.", "DeallocTrace.", "DeallocLog.", "HolderStep", "LeakFinding"] {
        XCTAssertFalse(output.contains(own), "\(build) names \(own) as a holder: \(output)")
      }
    }
  }
}
