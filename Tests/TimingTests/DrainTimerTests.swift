import Dispatch
import TestSupport
import XCTest

@testable import DeallocQueue

/// The queues' timer (``DrainTimer``): real deadlines, so these run with the timing tests.
/// They assert which deadline came first, never how long anything took; the deadlines are
/// far enough apart that the test thread would have to stall for 200 ms between two calls
/// to reorder them.
final class DrainTimerTests: XCTestCase {
  /// Actions run in the order of their deadlines, whatever the order they were scheduled in:
  /// an earlier deadline scheduled after a later one re-arms the timer, and a thread that
  /// wakes late still takes what is due in order.
  func testActionsRunInTheOrderOfTheirDeadlines() {
    let order = Observed<[String]>([])
    let done = DispatchSemaphore(value: 0)
    for (name, milliseconds) in [("third", 600), ("first", 200), ("second", 400)] {
      DrainTimer.schedule(afterNanoseconds: milliseconds * 1_000_000) {
        order.update { $0.append(name) }
        done.signal()
      }
    }
    for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + .seconds(30)), .success) }
    XCTAssertEqual(order.value, ["first", "second", "third"])
  }

  /// A batch with a short delay is not held behind one with a long delay that armed the
  /// timer first: it is released while the other is still queued.
  func testAShortDelayAfterALongOneIsNotHeldBehindIt() {
    let slow = DeallocQueue(label: "slow", delay: .seconds(600))
    let fast = DeallocQueue(label: "fast", delay: .milliseconds(10))
    let slowReleased = Observed(false)
    let fastReleased = DispatchSemaphore(value: 0)
    var waiting: Probe? = Probe { _ in slowReleased.set(true) }
    var quick: Probe? = Probe { _ in fastReleased.signal() }

    slow.releaseInBackground(&waiting)
    fast.releaseInBackground(&quick)

    XCTAssertEqual(
      fastReleased.wait(timeout: .now() + .seconds(60)), .success,
      "the short delay waited for the long one's deadline")
    XCTAssertFalse(slowReleased.value, "the long delay's batch went early")
    XCTAssertEqual(slow.pendingCount, 1)
    slow.drain()
    XCTAssertTrue(slowReleased.value)
  }

  /// Queues that share a serial target have their batches drained in the order of their
  /// deadlines there.
  func testBatchesOfSeveralQueuesReachTheirTargetInDeadlineOrder() {
    let target = DispatchQueue(label: "one-target")
    let order = Observed<[String]>([])
    let done = DispatchSemaphore(value: 0)
    var queues: [DeallocQueue] = []
    for (label, milliseconds) in [("third", 600), ("first", 200), ("second", 400)] {
      let queue = DeallocQueue(label: label, delay: .milliseconds(milliseconds), target: target)
      queues.append(queue)
      var object: Probe? = Probe { _ in
        order.update { $0.append(label) }
        done.signal()
      }
      queue.releaseInBackground(&object)
    }
    for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + .seconds(30)), .success) }
    XCTAssertEqual(order.value, ["first", "second", "third"])
    XCTAssertTrue(queues.allSatisfy { $0.pendingCount == 0 })
  }
}
