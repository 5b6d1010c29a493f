import DeallocQueue
import Dispatch
import Foundation
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// The queue's tests that need real time to pass: a real timer's delay, or a `deinit` that
/// sleeps so that a drain is caught halfway. They assert only order (never that something
/// took less than some time), and run as this one serial group.
final class QueueTimingTests: XCTestCase {
  func testCallerVariableIsNilAndObjectDeinitsLaterOnAnotherThread() throws {
    let queue = DeallocQueue(label: "test", delay: .milliseconds(100))
    let deinitThread = Observed<UInt?>(nil)
    let deinitTime = Observed<UInt64?>(nil)
    let done = expectation(description: "deinit")
    var object: Probe? = Probe { thread in
      deinitThread.update { $0 = thread }
      deinitTime.update { $0 = DispatchTime.now().uptimeNanoseconds }
      done.fulfill()
    }
    weak let watcher = object
    let start = DispatchTime.now().uptimeNanoseconds

    queue.releaseInBackground(&object)

    XCTAssertNil(object, "the caller's variable must be nil right after the call")
    XCTAssertNotNil(watcher, "the object must still be alive before the drain")
    XCTAssertEqual(queue.pendingCount, 1)
    XCTAssertTrue(queue.isPending(try XCTUnwrap(watcher)))
    wait(for: [done], timeout: 5)
    XCTAssertNil(watcher)
    let elapsed = try XCTUnwrap(deinitTime.current) - start
    // A lower bound only: a timer never fires early, and a loaded machine only delays it.
    XCTAssertGreaterThanOrEqual(elapsed, 100_000_000, "deinit ran before the delay")
    XCTAssertNotEqual(deinitThread.current, currentThreadID(), "deinit ran on the caller's thread")
    XCTAssertEqual(queue.pendingCount, 0)
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
    XCTAssertEqual(outerThread.current, currentThreadID())
    XCTAssertNil(innerThread.current, "the inner object must not be released in the same drain")
    wait(for: [innerDeinit], timeout: 5)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testWaitReturnsOnlyWhenAnotherThreadsDrainHasReleasedItsWholeBatch() {
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
    started.wait()  // the drain is releasing its first object

    XCTAssertEqual(queue.pendingCount, 0, "the batch left the queue before its release")
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 1)
    XCTAssertTrue(queue.waitForDrainsInFlight())

    XCTAssertEqual(finished.current, 3, "returned before the drain released its whole batch")
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 0)
  }

  func testATimerDrainInFlightIsWaitedForToo() {
    let queue = DeallocQueue(label: "test", delay: .milliseconds(5))
    let started = DispatchSemaphore(value: 0)
    let finished = Observed(false)
    var object: Probe? = Probe { _ in
      started.signal()
      usleep(200_000)
      finished.update { $0 = true }
    }
    queue.releaseInBackground(&object)
    started.wait()

    XCTAssertTrue(queue.waitForDrainsInFlight())
    XCTAssertTrue(finished.current)
  }
}
