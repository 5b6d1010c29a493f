import DeallocQueue
import DeallocTesting
import Foundation
import TestSupport
import Testing
import XCTest

// Sample test suites that `LeakAssertionChildProcessTests` runs in a child copy of this
// test binary, one test at a time, and judges by exit status and output. Two of them
// leak on purpose, so they are skipped unless `DEALLOCTESTING_SAMPLES=1`.

/// Whether this process is a child run of the samples.
let samplesEnabled = ProcessInfo.processInfo.environment["DEALLOCTESTING_SAMPLES"] == "1"

/// A private queue that never drains on its own during a test: an object still in it at
/// the end of a test can only be released by the leak check's drain.
let sampleQueue = DeallocQueue(label: "samples", delay: .seconds(60))

/// A private queue whose own timer lets go of its objects long before a test ends.
let fastSampleQueue = DeallocQueue(label: "fast-samples", delay: .milliseconds(5))

final class XCTestLeakSamples: XCTestCase {
  override func setUpWithError() throws {
    try XCTSkipUnless(samplesEnabled, "set DEALLOCTESTING_SAMPLES=1 to run the leak samples")
  }

  /// A screen handed to a queue is still alive at teardown: a delayed dealloc, which passes.
  func testDelayedDeallocPasses() {
    var screen: Node? = Node()
    expectDeallocated(screen!)
    sampleQueue.releaseInBackground(&screen)
  }

  /// Two nodes that hold each other, never queued: a plain leak, which fails.
  func testRetainCycleFails() {
    let cycle = makeRetainCycle()
    expectDeallocated(cycle)
  }

  /// The same cycle, with a stale copy of the node's address in a live malloc buffer: a word
  /// that points at it and owns nothing.
  func testRetainCycleWithAStaleCopyFails() {
    let cycle = makeRetainCycle()
    leaveAStaleCopy(of: cycle)
    expectDeallocated(cycle)
  }

  /// Both ends of one cycle watched by one tracker: two failures, and the first one's
  /// holder paths (kept by the tracker while it checks the second) are no holder of it.
  func testBothEndsOfACycleFail() {
    let cycle = makeRetainCycle()
    let tracker = makeLeakTracker()
    tracker.track(cycle)
    tracker.track(cycle.next!)
  }

  /// Two leaks watched by two calls: two failures, each at its own line.
  func testTwoLeaksFailTwiceAtTheirLines() {
    let first = makeRetainCycle()
    let second = makeClosureCycle()
    expectDeallocated(first)
    expectDeallocated(second)
  }

  /// A screen handed to a queue while a cache still holds it: it survives the drain.
  func testCachedScreenHandedToQueueFails() {
    var screen: Node? = Node()
    ForgetfulCache.insert(screen!)
    let tracker = makeLeakTracker()
    tracker.track(screen!)
    sampleQueue.releaseInBackground(&screen)
  }

  /// A cached screen that the queue's own timer released before teardown: it survived that
  /// release, and no queue holds it when the leak check looks.
  func testCachedScreenReleasedByItsQueuesTimerFails() {
    var screen: Node? = Node()
    ForgetfulCache.insert(screen!)
    let tracker = makeLeakTracker(settleTimeout: .milliseconds(10))
    tracker.track(screen!)
    fastSampleQueue.releaseInBackground(&screen)
    // Past the delay: the timer's drain took the batch and finished releasing it.
    let deadline = ContinuousClock.now + .seconds(30)
    while fastSampleQueue.pendingCount > 0, ContinuousClock.now < deadline {
      usleep(1_000)
    }
    fastSampleQueue.waitForDrainsInFlight()
    XCTAssertEqual(fastSampleQueue.pendingCount, 0, "the timer did not drain the queue")
  }
}

@Suite(.enabled(if: samplesEnabled, "set DEALLOCTESTING_SAMPLES=1 to run the leak samples"))
struct SwiftTestingLeakSamples {
  @Test(.leakTracking) func delayedDeallocPasses() {
    var screen: Node? = Node()
    expectDeallocated(screen!)
    sampleQueue.releaseInBackground(&screen)
  }

  @Test(.leakTracking) func closureCycleFails() {
    let model = makeClosureCycle()
    expectDeallocated(model)
  }

  @Test func cachedScreenInWithLeakTrackingFails() {
    withLeakTracking { tracker in
      var screen: Node? = Node()
      ForgetfulCache.insert(screen!)
      tracker.track(screen!)
      sampleQueue.releaseInBackground(&screen)
    }
  }
}
