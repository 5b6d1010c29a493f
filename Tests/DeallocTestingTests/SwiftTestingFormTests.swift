import DeallocQueue
import Testing

@testable import DeallocTesting

/// The Swift Testing forms in this process; their failing side runs in a child process
/// (`LeakAssertionChildProcessTests`) and under `withKnownIssue` here.
@Suite struct SwiftTestingFormTests {
  @Test(.leakTracking) func traitMakesATrackerLabelledWithTheTestCurrent() {
    #expect(
      LeakTracker.current?.label
        == "DeallocTestingTests.SwiftTestingFormTests.traitMakesATrackerLabelledWithTheTestCurrent()"
    )
  }

  @Test func queuedObjectInWithLeakTrackingIsDrainedNotReported() {
    let queue = DeallocQueue(label: "form-tests", delay: .seconds(60))
    let gone = Flag()
    withLeakTracking { tracker in
      var node: Node? = Node(onDeinit: gone.set)
      tracker.track(node!)
      queue.releaseInBackground(&node)
      #expect(!gone.isSet)
    }
    #expect(gone.isSet, "the scope's end drained the queue")
    #expect(queue.pendingCount == 0)
  }

  @Test func asyncWithLeakTrackingDrainsToo() async {
    let queue = DeallocQueue(label: "form-tests-async", delay: .seconds(60))
    let gone = Flag()
    await withLeakTracking { _ in
      var node: Node? = Node(onDeinit: gone.set)
      expectDeallocated(node!)
      await Task.yield()
      queue.releaseInBackground(&node)
    }
    #expect(gone.isSet)
  }

  @Test func leakInWithLeakTrackingRecordsAnIssueAtTheWatchingLine() {
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    let watchedLine = #line + 3
    withKnownIssue {
      withLeakTracking(settleTimeout: .milliseconds(10)) { tracker in
        tracker.track(cycle)
      }
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined()
      return text.hasPrefix("leak: DeallocTestingTests.Node at 0x")
        && text.contains("state: leaked")
        && issue.sourceLocation?.line == watchedLine
        && issue.sourceLocation?.fileName == "SwiftTestingFormTests.swift"
    }
  }

  @Test func expectDeallocatedOutsideAScopeRecordsAnIssue() {
    let node = Node()
    withKnownIssue {
      expectDeallocated(node)
    } matching: { issue in
      issue.comments.map(\.rawValue).joined().contains("needs a leak tracking scope")
    }
  }
}

/// A suite-wide `.leakTracking` gives every test in it (and nested suites) a tracker.
@Suite(.leakTracking) struct LeakTrackingSuiteTraitTests {
  @Test func eachTestGetsItsOwnTracker() {
    #expect(
      LeakTracker.current?.label
        == "DeallocTestingTests.LeakTrackingSuiteTraitTests.eachTestGetsItsOwnTracker()")
  }

  @Test(arguments: [1, 2]) func eachTestCaseIsVerified(count: Int) {
    let queue = DeallocQueue(label: "suite-trait", delay: .seconds(60))
    for _ in 0..<count {
      var node: Node? = Node()
      expectDeallocated(node!)
      queue.releaseInBackground(&node)
    }
    #expect(LeakTracker.current?.watchedCount == count)
  }

  @Suite struct Nested {
    @Test func nestedTestsAreTrackedToo() {
      #expect(LeakTracker.current != nil)
    }
  }
}
