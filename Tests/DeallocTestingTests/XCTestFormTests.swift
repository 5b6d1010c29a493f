import DeallocQueue
import TestSupport
import XCTest

@testable import DeallocTesting

/// The XCTest forms in this process; their failing side runs in a child process
/// (`LeakAssertionChildProcessTests`), since corelibs XCTest cannot expect a failure.
final class XCTestFormTests: XCTestCase {
  func testExpectDeallocatedDrainsTheQueueInTeardown() {
    let queue = DeallocQueue(label: "teardown", delay: .seconds(60))
    let gone = Flag()
    // Teardown blocks run last-registered first: this one runs after the leak check.
    addTeardownBlock {
      XCTAssertTrue(gone.isSet, "the leak check in teardown drained the queue")
      XCTAssertEqual(queue.pendingCount, 0)
    }
    var node: Node? = Node(onDeinit: gone.set)
    expectDeallocated(node!)
    queue.releaseInBackground(&node)
    XCTAssertFalse(gone.isSet, "nothing drains before teardown")
  }

  /// `expectDeallocated(_:settleTimeout:)` watches with its own wait, as the Swift Testing
  /// forms do; objects watched with the same wait share one tracker.
  func testExpectDeallocatedTakesItsSettleTimeout() {
    let nodes = [Node(), Node(), Node()]
    expectDeallocated(nodes[0], settleTimeout: .seconds(7))
    expectDeallocated(nodes[1], settleTimeout: .seconds(7))
    expectDeallocated(nodes[2])
    let trackers = TeardownTrackers.byTest.withLock { trackers in
      trackers.filter { $0.key.test == ObjectIdentifier(self) }.values.map {
        ($0.settleTimeout, $0.watchedCount)
      }
    }
    XCTAssertEqual(
      trackers.sorted { $0.0 < $1.0 }.map { "\($0.0) \($0.1)" },
      ["0.5 seconds 1", "7.0 seconds 2"])
  }

  func testMakeLeakTrackerIsLabelledWithTheTestAndVerifiedInTeardown() {
    let flags = [Flag(), Flag()]
    addTeardownBlock {
      XCTAssertTrue(flags.allSatisfy(\.isSet), "teardown verified the tracker and drained")
    }
    let tracker = makeLeakTracker()
    XCTAssertEqual(tracker.label, name)
    for flag in flags {
      var node: Node? = Node(onDeinit: flag.set)
      tracker.track(node!)
      DeallocQueue.shared.releaseInBackground(&node)
    }
    XCTAssertEqual(tracker.watchedCount, 2)
  }

  func testCallSiteFromXCTestFileTakesTheFolderAsModule() {
    let site = CallSite(file: "/src/Tests/FeedTests/ScreenTests.swift", line: 12)
    XCTAssertEqual(site.fileID, "FeedTests/ScreenTests.swift")
    XCTAssertEqual(site.description, "ScreenTests.swift:12")
  }
}
