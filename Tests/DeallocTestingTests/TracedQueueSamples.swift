import DeallocQueue
import TestSupport
import XCTest

/// Queue samples that `DrainRecordChildProcessTests` runs in a traced child copy of this
/// test binary; skipped unless `DEALLOCTESTING_SAMPLES=1`.
final class TracedQueueSamples: XCTestCase {
  override func setUpWithError() throws {
    try XCTSkipUnless(samplesEnabled, "set DEALLOCTESTING_SAMPLES=1 to run the samples")
  }

  /// One batch of five: two traced entries and three that bypass the tracing hook (as
  /// entries enqueued before tracing started would), drained at once.
  func testDrainOfAPartlyTracedBatch() {
    let queue = DeallocQueue(label: "partly-traced", delay: .seconds(60))
    for index in 0..<5 {
      var node: Node? = Node()
      if index.isMultiple(of: 2) {
        queue.releaseInBackgroundWithoutTracingHook(&node)
      } else {
        queue.releaseInBackground(&node)
      }
    }
    XCTAssertEqual(queue.pendingCount, 5)
    queue.drain()
  }
}
