import DeallocQueue
import DeallocTesting
import Foundation
import Synchronization
import Testing

/// The child side of NoLeakedObjectsTraitTests: Swift Testing suites under
/// `.leakTracking(.allObjects)` that run only in the child those tests start.
enum TraitChild {
  static let variable = "CENSUS_TRAIT_CHILD"
  static var isChild: Bool { ProcessInfo.processInfo.environment[variable] == "1" }
}

@Suite(.enabled(if: TraitChild.isChild), .leakTracking(.allObjects), .serialized)
struct CensusTraitLeakFreeChild {
  // Kept for the whole run: a queue that goes away releases what it holds.
  static let queue = DeallocQueue(label: "trait-child", delay: .seconds(3600))
  static let queuedObjectGone = Mutex(false)

  @Test func objectsThatAllGo() {
    var queued: QueuedUntilTheEnd? = QueuedUntilTheEnd()
    Self.queue.releaseInBackground(&queued)
    #expect([TraitCycleHead(), TraitCycleHead()].count == 2)
  }

  /// Runs after the test above (`.serialized` keeps the order of the source).
  @Test func aCycleBrokenBeforeTheEnd() {
    #expect(
      Self.queuedObjectGone.withLock { $0 },
      "the census at the end of the test before drained its queue, an hour early")
    let head = TraitCycleHead()
    let tail = TraitCycleTail()
    head.tail = tail
    tail.head = head
    tail.head = nil
  }
}

final class QueuedUntilTheEnd {
  deinit { CensusTraitLeakFreeChild.queuedObjectGone.withLock { $0 = true } }
}

@Suite(.enabled(if: TraitChild.isChild), .leakTracking(.allObjects), .serialized)
struct CensusTraitLeakingChild {
  @Test func leaksACycle() {
    leakTraitCycle()
  }

  @Test func leaksNothing() {
    #expect(TraitCycleTail().head == nil)
  }
}

@Suite(.enabled(if: TraitChild.isChild), .leakTracking(.allObjects))
struct CensusTraitParallelChild {
  // Two tests that overlap for sure: the first leaks only once the second has started, and
  // the second ends only once the first has leaked.
  static let started = Mutex<Set<String>>([])

  @Test func leaksWhileTheOtherRuns() async throws {
    try await Self.wait(for: "beside")
    leakTraitCycle()
    Self.started.withLock { _ = $0.insert("leaked") }
  }

  @Test func runsBesideTheLeak() async throws {
    Self.started.withLock { _ = $0.insert("beside") }
    try await Self.wait(for: "leaked")
  }

  /// Waits (at most 60 s, then fails) until the other test set `flag`.
  static func wait(for flag: String) async throws {
    for _ in 0..<12_000 {
      if started.withLock({ $0.contains(flag) }) { return }
      try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("\(flag) never came within 60 s: do the child's tests run in parallel?")
  }
}

@inline(never)
func leakTraitCycle() {
  let head = TraitCycleHead()
  let tail = TraitCycleTail()
  head.tail = tail
  tail.head = head
}

final class TraitCycleHead {
  var tail: TraitCycleTail?
}

final class TraitCycleTail {
  var head: TraitCycleHead?
}
