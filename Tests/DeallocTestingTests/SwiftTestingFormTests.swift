import DeallocQueue
import Synchronization
import TestSupport
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

  @Test func throwingTestUnderTheTraitStillReportsItsLeakAndRethrows() async throws {
    let trait = LeakTrackingTrait.leakTracking(settleTimeout: .milliseconds(10))
    let test = try #require(Test.current)
    let leaked = LeakedNode()
    defer { leaked.release() }
    let seen = MatcherSightings()
    // The matcher takes the leak and the error as known, so nothing is rethrown; `try` is for
    // the signature.
    try await withKnownIssue {
      try await trait.provideScope(for: test, testCase: Test.Case.current) {
        leaked.make()
        throw SampleFailure()
      }
    } matching: { issue in
      seen.note(issue)
    }
    #expect(seen.leak.isSet, "the leak was not reported because the test threw")
    #expect(seen.error.isSet, "the test's error must propagate")
  }

  @Test func throwingBodyOfWithLeakTrackingStillReportsItsLeakAndRethrows() throws {
    let cycle = makeRetainCycle()
    defer { cycle.next = nil }
    let seen = MatcherSightings()
    try withKnownIssue {
      try withLeakTracking(settleTimeout: .milliseconds(10)) { tracker in
        tracker.track(cycle)
        throw SampleFailure()
      }
    } matching: { issue in
      seen.note(issue)
    }
    #expect(seen.leak.isSet, "the leak was not reported because the body threw")
    #expect(seen.error.isSet, "the body's error must propagate")
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

private struct SampleFailure: Error {}

/// What a `withKnownIssue` matcher saw.
private final class MatcherSightings: Sendable {
  let leak = Flag()
  let error = Flag()

  /// Notes whether `issue` is the leak of a `Node` or the body's `SampleFailure`, and takes
  /// only those two as known: any other issue fails the test.
  func note(_ issue: Issue) -> Bool {
    if issue.comments.map(\.rawValue).joined().hasPrefix("leak: DeallocTestingTests.Node") {
      leak.set()
      return true
    }
    if case .errorCaught(let error) = issue.kind, error is SampleFailure {
      self.error.set()
      return true
    }
    return false
  }
}

/// A node that a cache keeps alive, made inside a `@Sendable` test body and let go after.
private final class LeakedNode: Sendable {
  private let id = Mutex<ObjectIdentifier?>(nil)

  /// Makes the node, watches it with the current tracker and leaves it in the cache.
  func make() {
    let node = Node()
    ForgetfulCache.insert(node)
    id.withLock { $0 = ObjectIdentifier(node) }
    expectDeallocated(node)
  }

  func release() {
    if let id = id.withLock({ $0 }) {
      ForgetfulCache.remove(id: id)
    }
  }
}
