import DeallocQueue
import Dispatch
import Foundation
import Synchronization
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

final class DeallocQueueTests: XCTestCase {
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
    XCTAssertGreaterThanOrEqual(elapsed, 100_000_000, "deinit ran before the delay")
    XCTAssertLessThan(elapsed, 2_000_000_000, "deinit ran far too late")
    XCTAssertNotEqual(deinitThread.current, currentThreadID(), "deinit ran on the caller's thread")
    XCTAssertEqual(queue.pendingCount, 0)
  }

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
    XCTAssertEqual(threads.current.count, 0)
    XCTAssertEqual(queue.pendingCount, 10)

    queue.drain()

    XCTAssertEqual(threads.current.count, 10, "drain() must release before it returns")
    XCTAssertEqual(Set(threads.current), [currentThreadID()])
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testOneScheduledDrainPerBatch() {
    let target = DispatchQueue(label: "counting-target")
    let queue = DeallocQueue(label: "test", delay: .milliseconds(50), target: target)
    let deinitCount = Observed(0)
    for _ in 0..<100 {
      var object: Probe? = Probe { _ in deinitCount.update { $0 += 1 } }
      queue.releaseInBackground(&object)
    }
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 1, "later entries join the first's batch")
    let drained = expectation(description: "batch drained")
    target.asyncAfter(deadline: .now() + .milliseconds(300)) { drained.fulfill() }
    wait(for: [drained], timeout: 5)
    XCTAssertEqual(deinitCount.current, 100)
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 1)

    // The next entry arrives at an empty queue and so starts a new batch with its own timer.
    var late: Probe? = Probe { _ in deinitCount.update { $0 += 1 } }
    queue.releaseInBackground(&late)
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 2)
    queue.drain()
    XCTAssertEqual(deinitCount.current, 101)
  }

  func testTimerOfAnExplicitlyDrainedBatchDoesNotReleaseTheNextBatchEarly() throws {
    let delay = 300
    let queue = DeallocQueue(label: "test", delay: .milliseconds(delay))
    var first: Probe? = Probe { _ in }
    let firstEnqueued = DispatchTime.now().uptimeNanoseconds
    queue.releaseInBackground(&first)  // schedules the first batch's timer, due at +300 ms
    queue.drain()  // takes the first batch before its timer fires
    usleep(200_000)

    let released = expectation(description: "second deinit")
    let deinitTime = Observed<UInt64?>(nil)
    var second: Probe? = Probe { _ in
      deinitTime.update { $0 = DispatchTime.now().uptimeNanoseconds }
      released.fulfill()
    }
    let secondEnqueued = DispatchTime.now().uptimeNanoseconds
    queue.releaseInBackground(&second)  // a new batch, with a timer of its own at +300 ms
    XCTAssertEqual(queue.scheduledDrainCountForTesting, 2)
    wait(for: [released], timeout: 10)

    // The first timer fires about 100 ms after the second enqueue. Had it drained the
    // second batch, the wait would be ~100 ms; a loaded machine only makes it longer. The
    // bound leaves room for a timer that fires a little early.
    let waited = try XCTUnwrap(deinitTime.current) - secondEnqueued
    XCTAssertGreaterThanOrEqual(
      waited, UInt64(delay - 20) * 1_000_000,
      "released \(waited / 1_000_000) ms after its enqueue: an older batch's timer drained it")
    if secondEnqueued - firstEnqueued >= UInt64(delay) * 1_000_000 {
      // The first timer was due before the second enqueue; this run proves nothing.
      print("note: the machine was too slow for this run to test the stale timer")
    }
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
    // Timed drains still in flight run on the serial target; a block due after all of them
    // runs after them, so once it has run nothing is being released any more.
    let settled = expectation(description: "timers settled")
    target.asyncAfter(deadline: .now() + .milliseconds(50)) { settled.fulfill() }
    wait(for: [settled], timeout: 10)
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
