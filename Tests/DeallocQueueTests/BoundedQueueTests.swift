import DeallocQueue
import Dispatch
import TestSupport
import XCTest

/// `maxPending`: a batch that reaches the bound is drained at once on the target queue.
/// No clocks: the target is a serial queue held suspended, so what the bound scheduled is
/// observable before it runs, and `target.sync {}` waits for it after.
final class BoundedQueueTests: XCTestCase {
  func testABatchThatReachesItsBoundIsDrainedOnTheTargetWithoutWaitingForItsTimer() {
    let target = DispatchQueue(label: "bounded-target")
    target.suspend()
    let queue = DeallocQueue(label: "bounded", delay: .seconds(3600), target: target, maxPending: 3)
    let deinits = Observed(0)
    for _ in 0..<2 { enqueue(on: queue, counting: deinits) }
    XCTAssertEqual(queue.boundDrainCountForTesting, 0)

    enqueue(on: queue, counting: deinits)
    XCTAssertEqual(queue.boundDrainCountForTesting, 1, "the third entry reached the bound")
    enqueue(on: queue, counting: deinits)
    XCTAssertEqual(queue.boundDrainCountForTesting, 1, "one drain per batch")
    XCTAssertEqual(queue.pendingCount, 4, "the drain waits for the target, and takes latecomers")
    XCTAssertEqual(deinits.value, 0)

    target.resume()
    target.sync {}
    XCTAssertEqual(queue.pendingCount, 0)
    XCTAssertEqual(deinits.value, 4, "released on the target, an hour before the timer")

    // The next batch starts afresh and gets its own bound.
    for _ in 0..<3 { enqueue(on: queue, counting: deinits) }
    target.sync {}
    XCTAssertEqual(queue.boundDrainCountForTesting, 2)
    XCTAssertEqual(deinits.value, 7)
  }

  func testWithoutABoundTheBatchWaitsForItsTimer() {
    let target = DispatchQueue(label: "unbounded-target")
    target.suspend()
    let queue = DeallocQueue(label: "unbounded", delay: .seconds(3600), target: target)
    let deinits = Observed(0)
    for _ in 0..<1000 { enqueue(on: queue, counting: deinits) }
    XCTAssertNil(queue.maxPending)
    XCTAssertEqual(queue.boundDrainCountForTesting, 0)
    XCTAssertEqual(queue.pendingCount, 1000)
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 1, "one timer for the batch")
    target.resume()
    target.sync {}
    XCTAssertEqual(queue.pendingCount, 1000, "nothing ran on the target but the future timer")
    queue.drain()
    XCTAssertEqual(deinits.value, 1000)
  }

  func testABoundBelowOneCountsAsOne() {
    let target = DispatchQueue(label: "tiny-target")
    let queue = DeallocQueue(label: "tiny", delay: .seconds(3600), target: target, maxPending: 0)
    XCTAssertEqual(queue.maxPending, 1)
    let deinits = Observed(0)
    enqueue(on: queue, counting: deinits)
    target.sync {}
    XCTAssertEqual(deinits.value, 1)
  }

  private func enqueue(on queue: DeallocQueue, counting deinits: Observed<Int>) {
    var object: Probe? = Probe { _ in deinits.update { $0 += 1 } }
    queue.releaseInBackground(&object)
  }
}
