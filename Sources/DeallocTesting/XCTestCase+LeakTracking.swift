import DeallocHooks
import DeallocTrace
import XCTest

extension XCTestCase {
  /// Watches `object` and fails this test in teardown if it is still alive then.
  ///
  /// Call it while the test still holds the object, then let go of it however the code
  /// under test does (`releaseInBackground`, a dismissed screen). An object waiting in a
  /// `DeallocQueue` at teardown is a delayed dealloc: its queue is drained and the object
  /// looked at again, so the check is deterministic without sleeping. Only an object handed
  /// to a queue by itself counts as waiting there: an element of a queued array or struct
  /// is not looked for inside the value (`DeallocQueue.isPending(_:)`), so watch the
  /// objects that are handed over, or drain the queue first. The failure points
  /// at this call's `file` and `line`. All the objects one test watches this way with one
  /// `settleTimeout` share one tracker, so a test with several leaks waits for stragglers
  /// once, not once per object.
  ///
  /// `settleTimeout`: how long teardown waits, at most, for the object to go when no queue
  /// holds it (released by another thread); as the Swift Testing forms take it.
  public func expectDeallocated(
    _ object: AnyObject,
    settleTimeout: Duration = .milliseconds(500),
    file: StaticString = #filePath,
    line: UInt = #line
  ) {
    let key = TeardownTrackers.Key(test: ObjectIdentifier(self), settleTimeout: settleTimeout)
    let tracker = TeardownTrackers.byTest.withLock { trackers in
      if let existing = trackers[key] { return (existing, isNew: false) }
      let created = LeakTracker(label: name, settleTimeout: settleTimeout)
      trackers[key] = created
      return (created, isNew: true)
    }
    if tracker.isNew {
      addTeardownBlock { [unowned self] in
        _ = TeardownTrackers.byTest.withLock { $0.removeValue(forKey: key) }
        assertNoLeaks(in: tracker.0)
      }
    }
    tracker.0.track(object, file: file, line: line)
  }

  /// A tracker for many objects, labelled with this test's name and verified in teardown.
  ///
  /// Every `track` call's line becomes the location of that object's failure.
  public func makeLeakTracker(settleTimeout: Duration = .milliseconds(500)) -> LeakTracker {
    let tracker = LeakTracker(label: name, settleTimeout: settleTimeout)
    addTeardownBlock { [unowned self] in
      assertNoLeaks(in: tracker)
    }
    return tracker
  }

  /// Verifies `tracker` now and records one failure per object still alive, at the line
  /// that started watching it.
  public func assertNoLeaks(in tracker: LeakTracker) {
    for finding in tracker.verify() {
      recordFailure(
        withDescription: "leak: \(finding)",
        inFile: finding.callSite.filePath,
        atLine: finding.callSite.line,
        expected: true
      )
    }
  }
}

/// The trackers `expectDeallocated` uses for each running test, one per settle timeout,
/// until its teardown.
enum TeardownTrackers {
  struct Key: Hashable {
    var test: ObjectIdentifier
    var settleTimeout: Duration
  }

  static let byTest = AnnotatedMutex<[Key: LeakTracker]>([:])
}
