import DeallocQueue
import Dispatch
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// `waitForDrainsInFlight`: a batch that a drain swapped out but has not finished
/// releasing is neither pending nor freed; a leak check must wait for exactly that.
final class DrainsInFlightTests: XCTestCase {
  func testNothingInFlightReturnsAtOnce() {
    let queue = DeallocQueue(label: "test", delay: .seconds(60))
    var object: Probe? = Probe { _ in }
    queue.releaseInBackground(&object)  // pending, not in flight: nothing to wait for

    XCTAssertTrue(queue.waitForDrainsInFlight())
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 0)
    XCTAssertEqual(queue.pendingCount, 1)
    queue.drain()
  }

  func testADeinitInTheDrainDoesNotWaitForItsOwnDrain() {
    let queue = DeallocQueue(label: "test", delay: .seconds(60))
    let returned = expectation(description: "the wait inside the deinit returned")
    let seen = Observed<(insideDrain: Bool, waited: Bool)?>(nil)
    var object: Probe? = Probe { _ in
      let insideDrain = queue.isDrainingOnCallingThread
      let waited = queue.waitForDrainsInFlight()
      seen.update { $0 = (insideDrain, waited) }
      returned.fulfill()
    }
    queue.releaseInBackground(&object)
    // On another thread, so that a self-deadlock fails this test instead of hanging it.
    DispatchQueue.global().async { queue.drain() }

    wait(for: [returned], timeout: 10)
    XCTAssertEqual(seen.value?.insideDrain, true)
    XCTAssertEqual(seen.value?.waited, true)
    XCTAssertFalse(queue.isDrainingOnCallingThread)
  }

  func testATimeoutGivesUpOnADrainThatDoesNotFinish() throws {
    let queue = DeallocQueue(label: "test", delay: .seconds(60))
    let started = DispatchSemaphore(value: 0)
    let unblock = DispatchSemaphore(value: 0)
    var object: Probe? = Probe { _ in
      started.signal()
      _ = unblock.wait(timeout: .now() + testWaitBound)
    }
    queue.releaseInBackground(&object)
    DispatchQueue.global().async { queue.drain() }
    try started.wait(for: "the drain to start")

    XCTAssertFalse(queue.waitForDrainsInFlight(timeout: .milliseconds(50)))
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 1)
    unblock.signal()
    XCTAssertTrue(queue.waitForDrainsInFlight(timeout: .seconds(30)))
    XCTAssertEqual(queue.drainsInFlightCountForTesting, 0)
  }
}
