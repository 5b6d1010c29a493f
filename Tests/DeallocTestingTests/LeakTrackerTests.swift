import DeallocQueue
import Dispatch
import TestSupport
import XCTest

@testable import DeallocTesting

final class LeakTrackerTests: XCTestCase {
  func testObjectGoneBeforeVerifyIsNoFinding() {
    let tracker = LeakTracker(label: name)
    var node: Node? = Node()
    tracker.track(node!)
    node = nil
    XCTAssertEqual(tracker.verify().count, 0)
  }

  func testWatchingDoesNotKeepTheObjectAlive() {
    let tracker = LeakTracker(label: name)
    let gone = Flag()
    var node: Node? = Node(onDeinit: gone.set)
    tracker.track(node!)
    node = nil
    XCTAssertTrue(gone.isSet, "track(_:) must not hold a strong reference")
    XCTAssertEqual(tracker.watchedCount, 1)
  }

  func testVerifyStopsWatching() {
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    let cycle = makeRetainCycle()
    tracker.track(cycle)
    XCTAssertEqual(tracker.verify().count, 1)
    XCTAssertEqual(tracker.watchedCount, 0)
    XCTAssertEqual(tracker.verify().count, 0, "a second verify has nothing left to look at")
    cycle.next = nil
  }

  func testQueuedObjectIsDrainedNotWaitedForAndPasses() {
    // A minute's delay: if verify waited for the timer instead of draining, this test
    // would take a minute; if it counted the queued object as a leak, it would fail.
    let queue = DeallocQueue(label: "slow", delay: .seconds(60))
    let tracker = LeakTracker(label: name)
    let gone = Flag()
    var node: Node? = Node(onDeinit: gone.set)
    tracker.track(node!)
    queue.releaseInBackground(&node)
    XCTAssertEqual(queue.pendingCount, 1)
    XCTAssertFalse(gone.isSet)

    let findings = tracker.verify()

    XCTAssertEqual(findings.count, 0, "\(findings)")
    XCTAssertTrue(gone.isSet)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  func testObjectInTheSharedQueueIsDrainedAndPasses() {
    let tracker = LeakTracker(label: name)
    let gone = Flag()
    var node: Node? = Node(onDeinit: gone.set)
    tracker.track(node!)
    DeallocQueue.shared.releaseInBackground(&node)

    XCTAssertEqual(tracker.verify().count, 0)
    XCTAssertTrue(gone.isSet)
  }

  func testManyObjectsInSeveralQueuesAreAllDrained() {
    let queues = [
      DeallocQueue(label: "a", delay: .seconds(60)), DeallocQueue(label: "b", delay: .seconds(60)),
    ]
    let tracker = LeakTracker(label: name)
    let flags = (0..<10).map { _ in Flag() }
    for (index, flag) in flags.enumerated() {
      var node: Node? = Node(onDeinit: flag.set)
      tracker.track(node!)
      queues[index % 2].releaseInBackground(&node)
    }

    XCTAssertEqual(tracker.verify().count, 0)
    XCTAssertTrue(flags.allSatisfy(\.isSet))
  }

  func testQueuedObjectThatSurvivesItsReleaseIsAFindingNamingTheQueue() throws {
    let queue = DeallocQueue(label: "survivors", delay: .seconds(60))
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    var node: Node? = Node()
    weak let survivor = node
    let address = hexAddress(of: node!)
    ForgetfulCache.insert(node!)
    defer { survivor.map(ForgetfulCache.remove) }
    tracker.track(node!, file: "Screen.swift", line: 7)
    queue.releaseInBackground(&node)

    let findings = tracker.verify()

    let finding = try XCTUnwrap(findings.first)
    XCTAssertEqual(findings.count, 1)
    XCTAssertEqual(finding.state, .survivedRelease(queues: ["survivors"]))
    XCTAssertEqual(finding.typeName, "DeallocTestingTests.Node")
    XCTAssertEqual(finding.address, address)
    XCTAssertEqual(finding.otherStrongReferences, 1, "only the cache holds it")
    XCTAssertEqual(finding.callSite.line, 7)
    XCTAssertEqual(finding.label, name)
    XCTAssertEqual(queue.pendingCount, 0, "the queue let it go")
    let message = finding.description
    XCTAssertTrue(message.contains("DeallocTestingTests.Node at \(address) is still alive"))
    XCTAssertTrue(message.contains("survived its release"), message)
    XCTAssertTrue(message.contains("DeallocQueue \"survivors\""), message)
    XCTAssertTrue(message.contains("1 other strong reference holds it"), message)
    XCTAssertTrue(message.contains("watched at Screen.swift:7"), message)
  }

  func testRetainCycleNeverQueuedIsAPlainLeak() throws {
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    let line = #line + 1
    tracker.track(cycle)

    let finding = try XCTUnwrap(tracker.verify().first)

    XCTAssertEqual(finding.state, .notQueued)
    XCTAssertEqual(
      finding.address, "0x" + String(UInt(bitPattern: ObjectIdentifier(cycle)), radix: 16))
    XCTAssertEqual(finding.address, finding.address.lowercased())
    XCTAssertEqual(finding.otherStrongReferences, 2, "the cycle's other node and this test")
    XCTAssertEqual(finding.callSite.line, line)
    XCTAssertTrue(finding.callSite.filePath.hasSuffix("LeakTrackerTests.swift"))
    XCTAssertTrue(finding.description.contains("leaked: it waits in no DeallocQueue"))
  }

  func testClosureCycleHandedToAQueueSurvivesTheDrain() throws {
    let queue = DeallocQueue(label: "closures", delay: .seconds(60))
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    var node: Node? = makeClosureCycle()
    weak let leaked = node
    defer { leaked?.onChange = nil }
    tracker.track(node!)
    queue.releaseInBackground(&node)

    let finding = try XCTUnwrap(tracker.verify().first)

    XCTAssertEqual(finding.state, .survivedRelease(queues: ["closures"]))
    XCTAssertEqual(finding.otherStrongReferences, 1, "the closure's capture")
  }

  func testVerifyInADeinitDuringADrainDoesNotWaitForThatDrain() {
    let queue = DeallocQueue(label: "verify-in-deinit", delay: .seconds(60))
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    tracker.track(cycle)
    let verified = expectation(description: "verify in the deinit returned")
    let findings = Observed<Int?>(nil)
    var node: Node? = Node {
      findings.set(tracker.verify().count)
      verified.fulfill()
    }
    queue.releaseInBackground(&node)
    // On another thread, so that a self-deadlock fails this test instead of hanging it.
    DispatchQueue.global().async { queue.drain() }

    wait(for: [verified], timeout: 30)
    XCTAssertEqual(findings.value, 1, "the cycle is still reported")
  }

  func testVerifyInsideADrainWaitsForAnotherThreadsDrainAtMostTheSettleTimeout() throws {
    // The other drain might itself be waiting for this one (a leak check in its deinit):
    // waiting for it without a bound could deadlock, so the wait is bounded.
    let blocked = DeallocQueue(label: "blocked", delay: .seconds(60))
    let started = DispatchSemaphore(value: 0)
    let unblock = DispatchSemaphore(value: 0)
    var stuck: Node? = Node {
      started.signal()
      _ = unblock.wait(timeout: .now() + testWaitBound)
    }
    blocked.releaseInBackground(&stuck)
    DispatchQueue.global().async { blocked.drain() }
    try started.wait(for: "the blocked drain to start")
    defer { unblock.signal() }

    let queue = DeallocQueue(label: "checking", delay: .seconds(60))
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(100))
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    tracker.track(cycle)
    let verified = expectation(description: "verify in the deinit returned")
    let findings = Observed<Int?>(nil)
    var node: Node? = Node {
      findings.set(tracker.verify().count)
      verified.fulfill()
    }
    queue.releaseInBackground(&node)
    DispatchQueue.global().async { queue.drain() }

    wait(for: [verified], timeout: 30)
    XCTAssertEqual(findings.value, 1)
    XCTAssertEqual(blocked.drainsInFlightCountForTesting, 1, "the other drain is still stuck")
  }

  func testMessageSaysWhenTracingIsOff() throws {
    try XCTSkipIf(CheckRecording.isRecording, "this process is traced")
    let tracker = LeakTracker(label: name, settleTimeout: .milliseconds(10))
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    tracker.track(cycle)

    let finding = try XCTUnwrap(tracker.verify().first)

    XCTAssertNil(finding.traceID)
    XCTAssertTrue(finding.description.contains("enqueue stack: not recorded: tracing is off"))
  }
}
