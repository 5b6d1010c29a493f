import DeallocHooks
import Testing

@testable import DeallocTesting

/// The suspending settle wait (issue 32): failing checks that run in parallel wait out their
/// settle together, not a pool's width at a time. Counted with a clock whose time stands
/// still until every check sleeps on it, never timed.
@Suite struct SettleWaitTests {
  /// Time stands still until `expected` sleepers wait at once; then it jumps past every
  /// deadline and wakes them all. A check that blocked its thread instead of suspending
  /// would never sleep here, and checks that waited in turns would never gather.
  final class GatheringClock: SettleClock {
    struct State {
      var time: Duration = .zero
      var waiting: [CheckedContinuation<Void, Never>] = []
      var peak = 0
      var jumps = 0
    }

    /// Annotated, so that ThreadSanitizer sees the lock that orders the sleepers' accesses
    /// (`Mutex` locks inside libswiftSynchronization, which is not instrumented).
    let state = AnnotatedMutex(State())
    let expected: Int

    init(expected: Int) { self.expected = expected }

    func now() -> Duration { state.withLock { $0.time } }

    func sleep(for duration: Duration) async {
      await withCheckedContinuation { continuation in
        let woken = state.withLock { state in
          state.waiting.append(continuation)
          state.peak = max(state.peak, state.waiting.count)
          return state.waiting.count >= expected ? Self.jump(&state) : []
        }
        for sleeper in woken { sleeper.resume() }
      }
    }

    /// Wakes whoever waits, jumping time: the bound of a run whose sleepers never gather.
    func giveUp() {
      for sleeper in state.withLock({ Self.jump(&$0) }) { sleeper.resume() }
    }

    private static func jump(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
      state.time += .seconds(3600)
      state.jumps += 1
      defer { state.waiting = [] }
      return state.waiting
    }
  }

  @Test func eightFailingChecksWaitOutOneSettleTogether() async {
    let clock = GatheringClock(expected: 8)
    let leaked = (0..<8).map { _ in makeRetainCycle() }
    defer { for node in leaked { node.next?.next = nil } }
    let trackers = leaked.enumerated().map { index, node in
      let tracker = LeakTracker(
        label: "settle \(index)", settleTimeout: .milliseconds(500), settleClock: clock)
      tracker.track(node)
      return tracker
    }
    // The bound: a minute of real time, then every sleeper is woken and the counts fail.
    let watchdog = Task {
      guard (try? await Task.sleep(for: .seconds(60))) != nil else { return }
      clock.giveUp()
    }
    let findings = await withTaskGroup(of: Int.self) { group in
      for tracker in trackers {
        group.addTask { await tracker.verifySuspending().count }
      }
      return await group.reduce(0, +)
    }
    watchdog.cancel()
    #expect(findings == 8, "each cycle is still a leak after the settle")
    let (peak, jumps) = clock.state.withLock { ($0.peak, $0.jumps) }
    #expect(peak == 8, "all eight checks waited at once")
    #expect(jumps == 1, "one settle for all eight, not one per turn of the pool's threads")
  }

  /// A check whose object goes during the settle wait does not wait it out.
  @Test func anObjectThatGoesEndsTheWait() async {
    let clock = GatheringClock(expected: 2)
    var node: Node? = Node()
    let tracker = LeakTracker(label: "goes", settleTimeout: .seconds(1), settleClock: clock)
    tracker.track(node!)
    let holder = Task { [node] in _ = node }
    node = nil
    _ = await holder.value
    #expect(await tracker.verifySuspending().isEmpty)
    #expect(clock.state.withLock { $0.jumps } == 0)
  }
}
