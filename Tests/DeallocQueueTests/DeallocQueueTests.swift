import DeallocQueue
import Dispatch
import Foundation
import Synchronization
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

final class DeallocQueueTests: XCTestCase {
  func testNilVariableIsANoOp() {
    let queue = DeallocQueue(label: "test")
    var nothing: Probe? = nil
    queue.releaseInBackground(&nothing)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testExplicitDrainDeinitsEverythingSynchronouslyOnTheCallingThread() {
    let queue = DeallocQueue(label: "test", delay: .seconds(60))
    let threads = Observed<[UInt]>([])
    for _ in 0..<10 {
      var object: Probe? = Probe { thread in threads.update { $0.append(thread) } }
      queue.releaseInBackground(&object)
    }
    XCTAssertEqual(threads.value.count, 0)
    XCTAssertEqual(queue.pendingCount, 10)

    queue.drain()

    XCTAssertEqual(threads.value.count, 10, "drain() must release before it returns")
    XCTAssertEqual(Set(threads.value), [currentThreadID()])
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testOneScheduledDrainPerBatch() {
    // Suspended, so that the batch's timer cannot drain before every entry joined; with a zero
    // delay the timer lands on the target when scheduled, ahead of the block added below.
    let target = DispatchQueue(label: "counting-target")
    target.suspend()
    let queue = DeallocQueue(label: "test", delay: .zero, target: target)
    let deinitCount = Observed(0)
    for _ in 0..<100 {
      var object: Probe? = Probe { _ in deinitCount.update { $0 += 1 } }
      queue.releaseInBackground(&object)
    }
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 1, "later entries join the first's batch")
    XCTAssertEqual(deinitCount.value, 0)
    let drained = DispatchSemaphore(value: 0)
    target.async { drained.signal() }  // runs after the batch's timer
    target.resume()
    XCTAssertEqual(drained.wait(timeout: .now() + .seconds(30)), .success)
    XCTAssertEqual(deinitCount.value, 100)
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 1)

    // The next entry arrives at an empty queue and so starts a new batch with its own timer.
    var late: Probe? = Probe { _ in deinitCount.update { $0 += 1 } }
    queue.releaseInBackground(&late)
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 2)
    queue.drain()
    XCTAssertEqual(deinitCount.value, 101)
  }

  /// A batch's timer drains only its own batch: the timer of a batch that `drain()` took
  /// must not release the next batch, which has a timer (and a full delay) of its own.
  ///
  /// Nothing here waits for time to pass. With a zero delay, the queue's drain is due at
  /// once and lands on the target when it is scheduled, in order with the blocks the
  /// test adds; the target is a suspended serial queue, so nothing runs until every block
  /// is in place. The last check proves that placement, so a run that could not test the
  /// stale timer fails instead of passing.
  func testTimerOfAnExplicitlyDrainedBatchDoesNotReleaseTheNextBatchEarly() {
    let target = DispatchQueue(label: "suspended-target")
    target.suspend()
    var suspended = true
    defer { if suspended { target.resume() } }  // a suspended queue must not be released
    let queue = DeallocQueue(label: "test", delay: .zero, target: target)
    let secondReleased = Observed(false)
    let checks = DispatchSemaphore(value: 0)
    let staleTimerRan = Observed<(pending: Int, released: Bool)?>(nil)
    let ownTimerRan = Observed<Bool?>(nil)

    var first: Probe? = Probe { _ in }
    queue.releaseInBackground(&first)  // the target: [first batch's timer]
    queue.drain()  // takes the first batch; its timer is stale now
    target.async {  // the target: [first batch's timer, this check]
      staleTimerRan.update { $0 = (queue.pendingCount, secondReleased.value) }
      checks.signal()
    }
    var second: Probe? = Probe { _ in secondReleased.update { $0 = true } }
    queue.releaseInBackground(&second)  // a new batch; the target: [..., its own timer]
    target.async {  // the target: [..., the second batch's timer, this check]
      ownTimerRan.update { $0 = secondReleased.value }
      checks.signal()
    }
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 2)
    XCTAssertFalse(secondReleased.value, "released before its timer ran")

    target.resume()
    suspended = false
    XCTAssertEqual(checks.wait(timeout: .now() + .seconds(30)), .success)
    XCTAssertEqual(checks.wait(timeout: .now() + .seconds(30)), .success)

    // The precondition: the second batch's timer ran before the block added after it, so the
    // first batch's timer, scheduled before the first check, ran before that check.
    XCTAssertEqual(
      ownTimerRan.value, true,
      "the timers did not reach the target when scheduled; this run cannot test the stale timer")
    XCTAssertEqual(
      staleTimerRan.value?.pending, 1, "the first batch's timer took the second batch")
    XCTAssertEqual(
      staleTimerRan.value?.released, false, "the first batch's timer released the second batch")
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testEightThreadsHandOverEveryObjectExactlyOnce() {
    let target = DispatchQueue(label: "stress-target")
    let queue = DeallocQueue(label: "stress", delay: .milliseconds(5), target: target)
    let threads = 8
    let perThread = 100_000
    let counts = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: threads * perThread)
    counts.initialize(repeating: 0)
    defer { counts.deallocate() }
    let countsAddress = Int(bitPattern: counts.baseAddress)
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
      let base = UnsafeMutablePointer<UInt8>(bitPattern: countsAddress)!
      for index in 0..<perThread {
        let slot = thread * perThread + index
        var object: Counted? = Counted(slot: base + slot)
        queue.releaseInBackground(&object)
        precondition(object == nil)
        if index % 10_000 == 0 { queue.drain() }
      }
    }
    queue.drain()
    // Every entry has left the queue: a timed drain that has not begun finds nothing, and
    // one that has is waited for, so nothing is being released after this.
    XCTAssertTrue(queue.waitForDrainsInFlight(timeout: .seconds(30)))
    XCTAssertEqual(queue.pendingCount, 0)
    var wrong = 0
    for count in counts where count != 1 { wrong += 1 }
    XCTAssertEqual(wrong, 0, "\(wrong) objects did not deinit exactly once")
  }
}

/// Increments its own slot in a shared buffer when it deinits (each slot has one writer).
private final class Counted {
  let slot: UnsafeMutablePointer<UInt8>
  init(slot: UnsafeMutablePointer<UInt8>) { self.slot = slot }
  deinit { slot.pointee &+= 1 }
}
