import DeallocQueue
import Dispatch
import Foundation
import Synchronization
import TestSupport
import XCTest

@testable import DeallocTesting

/// The tracker's tests that need real time to pass: a release 50 ms into the settle wait, a
/// drain longer than the settle timeout, a real timer's release. They assert what `verify()`
/// finds (never how long it took), and run in the `TimingTests` target, one serial group with
/// `QueueTimingTests`.
final class LeakTrackerTimingTests: XCTestCase {
  func testObjectReleasedOnAnotherThreadWithinTheSettleTimeoutPasses() {
    let tracker = LeakTracker(label: name, settleTimeout: .seconds(10))
    let gone = DispatchSemaphore(value: 0)
    var node: Probe? = Probe { _ in gone.signal() }
    tracker.track(node!)
    ForgetfulCache.insert(node!)
    let released = ObjectIdentifier(node!)
    node = nil
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
      ForgetfulCache.remove(id: released)
    }

    XCTAssertEqual(tracker.verify().count, 0)
    // The weak reference `verify()` reads is nil once the deinit starts, before its body
    // runs on the releasing thread: wait for the body, with a guard against a hang (under
    // ThreadSanitizer the gap was long enough for a plain check to fail).
    XCTAssertEqual(gone.wait(timeout: .now() + .seconds(60)), .success)
  }

  func testObjectHandedToAQueueByAnotherThreadDuringTheWaitIsDrainedAndPasses() {
    let queue = DeallocQueue(label: "late", delay: .seconds(60))
    // An hour: a tracker that waited out its settle timeout instead of draining the queue
    // would still be waiting when the hang guard below gives up. The guard is no measure of
    // speed: the two outcomes are a hand-off (50 ms) and an hour apart.
    let tracker = LeakTracker(label: name, settleTimeout: .seconds(3600))
    let gone = Flag()
    let node = Probe { _ in gone.set() }
    tracker.track(node)
    let handoff = Handoff(consume node)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
      var node = handoff.take()
      queue.releaseInBackground(&node)
    }
    let findings = Observed<Int?>(nil)
    let verified = DispatchSemaphore(value: 0)
    Thread {
      findings.set(tracker.verify().count)
      verified.signal()
    }.start()

    guard verified.wait(timeout: .now() + .seconds(60)) == .success else {
      XCTFail("verify() waits for its settle timeout instead of draining the queue")
      return
    }
    XCTAssertEqual(findings.value, 0)
    XCTAssertTrue(gone.isSet)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testATimerDrainStillReleasingASlowBatchIsWaitedForNotReported() throws {
    // Eight deinits of 100 ms each: the timer's drain takes 800 ms, longer than the
    // default settle timeout (500 ms) that a polling check would give up after.
    let queue = DeallocQueue(label: "slow-deinits", delay: .milliseconds(5))
    let tracker = LeakTracker(label: name)
    let started = DispatchSemaphore(value: 0)
    let flags = (0..<8).map { _ in Flag() }
    for flag in flags {
      var node: Probe? = Probe { _ in
        started.signal()
        usleep(100_000)
        flag.set()
      }
      tracker.track(node!)
      queue.releaseInBackground(&node)
    }
    // The timer's drain is releasing its first node; the batch left the queue.
    try started.wait(for: "the timer's drain to release its first node")
    XCTAssertEqual(queue.pendingCount, 0)

    let findings = tracker.verify()

    XCTAssertEqual(findings.count, 0, "a drain still releasing is a delayed dealloc: \(findings)")
    XCTAssertTrue(flags.allSatisfy(\.isSet), "verify returned before the drain finished")
  }

  func testSurvivorOfAnEarlierTimerReleaseSaysWhatIsKnownWithoutTracing() throws {
    try XCTSkipIf(CheckRecording.isRecording, "this process is traced")
    let queue = DeallocQueue(label: "fast", delay: .milliseconds(5))
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    var node: Probe? = Probe { _ in }
    weak let survivor = node
    ForgetfulCache.insert(node!)
    defer { survivor.map(ForgetfulCache.remove) }
    tracker.track(node!)
    queue.releaseInBackground(&node)
    try waitUntil("the timer to take the batch") { queue.pendingCount == 0 }
    queue.waitForDrainsInFlight()

    let finding = try XCTUnwrap(tracker.verify().first)

    XCTAssertEqual(finding.state, .notQueued, "untraced, nothing knows that a queue released it")
    XCTAssertNil(finding.traceID)
    let message = finding.description
    XCTAssertTrue(message.contains("or released by one earlier"), message)
    XCTAssertTrue(
      message.contains(
        "not recorded: tracing is off (set DEALLOCTRACE_LOG=FILE to record it, and to learn "
          + "whether a queue released it earlier)"),
      message)
  }
}

/// Passes one object to another thread, which takes the last strong reference.
///
/// `@unchecked Sendable`: the object is only moved through the lock, never used.
private final class Handoff: @unchecked Sendable {
  private let slot: Mutex<Probe?>

  init(_ probe: sending Probe) {
    slot = Mutex(probe)
  }

  func take() -> Probe? {
    slot.withLock { $0.take() }
  }
}
