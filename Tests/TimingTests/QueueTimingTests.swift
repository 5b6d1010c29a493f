import DeallocQueue
import Dispatch
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// The queue's tests that need real time to pass: a real timer's delay, or a `deinit` that
/// sleeps so that a drain is caught halfway. They assert only order (never how long
/// something took), and run in the `TimingTests` target, one serial group with
/// `LeakTrackerTimingTests`.
final class QueueTimingTests: XCTestCase {
  func testCallerVariableIsNilAndObjectDeinitsLaterOnAnotherThread() throws {
    // Suspended, so that the batch's timer cannot release the object before the checks
    // below, however slow this machine is.
    let target = DispatchQueue(label: "suspended-target")
    target.suspend()
    var suspended = true
    defer { if suspended { target.resume() } }  // a suspended queue must not be released
    let queue = DeallocQueue(label: "test", delay: .milliseconds(100), target: target)
    let deinitThread = Observed<UInt?>(nil)
    let done = expectation(description: "deinit")
    var object: Probe? = Probe { thread in
      deinitThread.update { $0 = thread }
      done.fulfill()
    }
    weak let watcher = object

    queue.releaseInBackground(&object)

    XCTAssertNil(object, "the caller's variable must be nil right after the call")
    XCTAssertNotNil(watcher, "the object must still be alive before the drain")
    XCTAssertEqual(queue.pendingCount, 1)
    XCTAssertTrue(queue.isPending(try XCTUnwrap(watcher)))
    target.resume()
    suspended = false
    wait(for: [done], timeout: 5)
    XCTAssertNil(watcher)
    XCTAssertNotEqual(deinitThread.value, currentThreadID(), "deinit ran on the caller's thread")
    XCTAssertEqual(queue.pendingCount, 0)
  }

  /// The batch's timer gets the queue's delay: a timer of the test's own on the same target,
  /// due long before that delay, finds the object still queued. Two timers' order, not a
  /// duration: nothing here reads a clock.
  func testATimerDueBeforeTheDelayFindsTheObjectStillQueued() {
    let target = DispatchQueue(label: "timers")
    let queue = DeallocQueue(label: "test", delay: .seconds(60), target: target)
    let released = Observed(false)
    var object: Probe? = Probe { _ in released.update { $0 = true } }
    queue.releaseInBackground(&object)
    let releasedAtOurTimer = Observed<Bool?>(nil)
    let fired = DispatchSemaphore(value: 0)
    target.asyncAfter(deadline: .now() + .milliseconds(100)) {
      releasedAtOurTimer.update { $0 = released.value }
      fired.signal()
    }

    XCTAssertEqual(fired.wait(timeout: .now() + .seconds(30)), .success)
    XCTAssertEqual(releasedAtOurTimer.value, false, "released before the queue's delay")
    XCTAssertEqual(queue.pendingCount, 1)
    queue.drain()
    XCTAssertTrue(released.value)
  }

  func testDeinitThatEnqueuesDuringADrainIsReleasedLaterWithoutDeadlock() {
    let queue = DeallocQueue(label: "test", delay: .milliseconds(20))
    let innerDeinit = expectation(description: "inner deinit")
    let outerThread = Observed<UInt?>(nil)
    let innerThread = Observed<UInt?>(nil)
    var outer: Probe? = Probe { thread in
      outerThread.update { $0 = thread }
      var inner: Probe? = Probe { thread in
        innerThread.update { $0 = thread }
        innerDeinit.fulfill()
      }
      queue.releaseInBackground(&inner)
      XCTAssertEqual(queue.pendingCount, 1, "the inner object waits for a drain of its own")
    }
    queue.releaseInBackground(&outer)
    queue.drain()
    XCTAssertEqual(outerThread.value, currentThreadID())
    XCTAssertNil(innerThread.value, "the inner object must not be released in the same drain")
    wait(for: [innerDeinit], timeout: 5)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testWaitReturnsOnlyWhenAnotherThreadsDrainHasReleasedItsWholeBatch() throws {
    let queue = DeallocQueue(label: "test", delay: .seconds(60))
    let started = DispatchSemaphore(value: 0)
    let finished = Observed(0)
    for _ in 0..<3 {
      var object: Probe? = Probe { _ in
        started.signal()
        usleep(100_000)
        finished.update { $0 += 1 }
      }
      queue.releaseInBackground(&object)
    }
    DispatchQueue.global().async { queue.drain() }
    try started.wait(for: "the drain to release its first object")

    XCTAssertEqual(queue.pendingCount, 0, "the batch left the queue before its release")
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 1)
    XCTAssertTrue(queue.waitForDrainsInFlight())

    XCTAssertEqual(finished.value, 3, "returned before the drain released its whole batch")
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 0)
  }

  func testATimerDrainInFlightIsWaitedForToo() throws {
    let queue = DeallocQueue(label: "test", delay: .milliseconds(5))
    let started = DispatchSemaphore(value: 0)
    let finished = Observed(false)
    var object: Probe? = Probe { _ in
      started.signal()
      usleep(200_000)
      finished.update { $0 = true }
    }
    queue.releaseInBackground(&object)
    try started.wait(for: "the timer's drain to start")

    XCTAssertTrue(queue.waitForDrainsInFlight())
    XCTAssertTrue(finished.value)
  }
}
