import DeallocHooks
import DeallocQueue
import DeallocTrace

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Watches objects during a test and, at its end, tells which ones are still alive.
///
/// It knows `DeallocQueue`: an object still waiting in a queue is a *delayed dealloc*, not
/// a leak. `verify()` drains the queues that hold watched objects, on the calling thread,
/// and looks again, so the result is deterministic and needs no sleep. What survives that
/// release, or was never in a queue, is a finding.
///
/// A queue's drain caught halfway (its own timer took the batch, and is still releasing
/// it) is waited for until it finishes, however long its `deinit`s take: its objects are in
/// no queue then, yet not leaked. Objects released on other threads with no queue (a task
/// finishing, a timer) get a bounded grace period, `settleTimeout`, polled through a weak
/// reference: the trade-off is that each `verify()` that finds a real leak costs up to that
/// long before it reports it. Passing checks never wait.
///
/// `verify()` may run inside a drain (a `deinit` that checks for leaks). It never waits for
/// its own thread's drain, and then waits for other threads' drains at most
/// `settleTimeout`, since one of those may be waiting for its drain in turn.
///
/// Each observation writes a `check` record when tracing is on (label: the test's name),
/// so that `dealloctrace report` can tell a delayed dealloc from a leak afterwards.
///
/// Most tests use the conveniences: `XCTestCase.expectDeallocated(_:file:line:)`, the
/// Swift Testing trait `.leakTracking` or `withLeakTracking(_:)`.
public final class LeakTracker: Sendable {
  /// The tracker of the current Swift Testing scope (`.leakTracking`, `withLeakTracking`).
  @TaskLocal public static var current: LeakTracker?

  /// The test (or scope) name written to `check` records and failure messages.
  public let label: String

  /// How long `verify()` waits, at most, for objects that no queue holds to go away.
  public let settleTimeout: Duration

  private let watched = AnnotatedMutex<[Watched]>([])

  /// - Parameters:
  ///   - label: the test's name; `check` records and failure messages carry it.
  ///   - settleTimeout: how long to wait for objects released on other threads that no
  ///     queue holds. Queued objects never wait: their queue is drained.
  public init(label: String, settleTimeout: Duration = .milliseconds(500)) {
    self.label = label
    self.settleTimeout = settleTimeout
    self.settleClock = ContinuousSettleClock()
  }

  /// A tracker whose suspending settle wait (`verifySuspending()`) reads `settleClock`: for
  /// tests, which count the waits instead of timing them.
  init(label: String, settleTimeout: Duration, settleClock: any SettleClock) {
    self.label = label
    self.settleTimeout = settleTimeout
    self.settleClock = settleClock
  }

  /// What `verifySuspending()`'s settle wait reads the time from and sleeps on.
  private let settleClock: any SettleClock

  /// Starts watching `object` without keeping it alive; failures point at the caller.
  public func track(
    _ object: AnyObject,
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: Int = #line,
    column: Int = #column
  ) {
    track(object, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Starts watching `object`, with XCTest's `file` and `line` for failures; for helpers
  /// that forward their caller's location.
  public func track(_ object: AnyObject, file: StaticString, line: UInt) {
    track(object, at: CallSite(file: file, line: line))
  }

  /// Starts watching `object`; failures point at `callSite`.
  func track(_ object: AnyObject, at callSite: CallSite) {
    let entry = Watched(
      object: object,
      typeName: String(reflecting: type(of: object)),
      address: UInt(bitPattern: ObjectIdentifier(object)),
      callSite: callSite
    )
    watched.withLock { $0.append(entry) }
  }

  /// How many objects are being watched and not yet verified.
  public var watchedCount: Int {
    watched.withLock { $0.count }
  }

  /// Looks at every watched object and returns those still alive after the queues let
  /// them go; stops watching them all.
  ///
  /// For each object: if it is gone, fine. If it waits in a `DeallocQueue`, that queue is
  /// drained now, on this thread (its other objects are released too, as the next timer
  /// would have), and the object is looked at again. Drains that other threads are running
  /// are waited for until they finish. If no queue holds it, it gets up to `settleTimeout`
  /// to go away. A `check` record is written for every look that tells something (see
  /// `firstLook`).
  public func verify() -> [LeakFinding] {
    let looked = lookAndDrain()
    guard !looked.isEmpty else { return [] }
    // Objects no queue holds may be released by another thread.
    waitUntilGone(looked.map(\.0))
    return looked.compactMap { entry, lookup in lastLook(at: entry, after: lookup) }
  }

  /// `verify()` for async callers (the Swift Testing trait, the async `withLeakTracking`):
  /// the settle wait for objects no queue holds suspends instead of blocking a thread, so
  /// many failing tests of a parallel run wait out their settle at the same time rather than
  /// a few at a time on the cooperative pool. The drains it runs and waits for still block:
  /// they end when their `deinit`s do.
  public func verifySuspending() async -> [LeakFinding] {
    let looked = lookAndDrain()
    guard !looked.isEmpty else { return [] }
    await settle(looked.map(\.0))
    return looked.compactMap { entry, lookup in lastLook(at: entry, after: lookup) }
  }

  /// Stops watching every object, looks at each once, drains the queues that hold any and
  /// waits for drains under way; returns the objects still alive, with the first look.
  private func lookAndDrain() -> [(Watched, QueueLookup)] {
    let entries = watched.withLock { entries in
      var taken: [Watched] = []
      swap(&taken, &entries)
      return taken
    }
    var looked: [(Watched, QueueLookup)] = []
    for entry in entries {
      if let lookup = firstLook(at: entry) {
        looked.append((entry, lookup))
      }
    }
    guard !looked.isEmpty else { return [] }
    drainOnce(looked.flatMap { $0.1.queues })
    // A timer drain may have taken a batch (before our first look, or just before our
    // drain) and still be releasing it: its objects are in no queue, yet not leaked.
    waitForDrainsInFlight()
    return looked
  }

  /// The first look: `nil` when the object is gone, else what the queues know about it.
  ///
  /// A queued object gets a `check` record now (alive, in its queue: what a report calls a
  /// false leak) and another after the drain. An object no queue holds gets one record,
  /// after the settle wait, so that a plain leak is one `alive` check, not two.
  private func firstLook(at entry: Watched) -> QueueLookup? {
    guard let lookup = entry.object.map(QueueLookup.init(for:)) else {
      recordCheck(entry, alive: false, id: nil)
      return nil
    }
    if lookup.isPending {
      recordCheck(entry, alive: true, id: lookup.traceID)
    }
    return lookup
  }

  /// The last look, after the drain and the settle wait: `nil` when the object is gone.
  private func lastLook(at entry: Watched, after first: QueueLookup) -> LeakFinding? {
    var queues = first.queues.map(\.label)
    var traceID = first.traceID
    // Another thread handed it to a queue since the first look: a delayed dealloc after all.
    if let late = entry.object.map(QueueLookup.init(for:)), late.isPending {
      recordCheck(entry, alive: true, id: late.traceID)
      queues += late.queues.map(\.label)
      traceID = traceID ?? late.traceID
      drainOnce(late.queues)
      waitForDrainsInFlight()
      waitUntilGone([entry])
    }
    // In no queue all along, yet alive: a queue's own timer may have released it before the
    // first look, and it survived that. Only the tracer, which watches survivors, knows.
    let earlierRelease = queues.isEmpty ? entry.object.flatMap(CheckRecording.survivorID) : nil
    traceID = traceID ?? earlierRelease
    guard let strongReferences = otherStrongReferences(to: entry) else {
      recordCheck(entry, alive: false, id: traceID)
      return nil
    }
    recordCheck(entry, alive: true, id: traceID)
    let holders =
      entry.object.map { HolderLookup.look(at: $0, others: strongReferences) } ?? .off
    let traceLog = CheckRecording.logDestination
    let enqueue = traceID.flatMap { id in
      traceLog.flatMap { EnqueueStackLookup.enqueue(ofObject: id, in: $0) }
    }
    let state: LeakFinding.State =
      if !queues.isEmpty {
        .survivedRelease(queues: queues)
      } else if earlierRelease != nil {
        .survivedEarlierRelease(queue: enqueue?.queue)
      } else {
        .notQueued
      }
    return LeakFinding(
      typeName: entry.typeName,
      address: hexAddress(entry.address),
      state: state,
      otherStrongReferences: strongReferences,
      traceID: traceID,
      callSite: entry.callSite,
      label: label,
      traceLog: traceLog,
      enqueueStack: enqueue?.frames ?? [],
      holderOutcome: holders
    )
  }

  /// The strong references to the object besides the check's own; `nil` when it is gone.
  private func otherStrongReferences(to entry: Watched) -> Int? {
    guard let object = entry.object else { return nil }
    // `object` is one strong reference of ours; the call's argument is borrowed.
    return Int(_getRetainCount(object)) - 1
  }

  private func recordCheck(_ entry: Watched, alive: Bool, id: UInt64?) {
    guard CheckRecording.isRecording else { return }
    CheckRecording.record(
      address: entry.address, type: entry.typeName, alive: alive, label: label, id: id)
  }

  /// Drains each queue once, even when it holds several watched objects.
  private func drainOnce(_ queues: [DeallocQueue]) {
    var drained: Set<ObjectIdentifier> = []
    for queue in queues where drained.insert(ObjectIdentifier(queue)).inserted {
      queue.drain()
    }
  }

  /// Waits until every live queue's drains that other threads began so far have released
  /// their batches; inside a drain, at most `settleTimeout` in all (see the type's notes).
  private func waitForDrainsInFlight() {
    let queues = DeallocQueue.liveQueues
    guard queues.contains(where: { $0.isDrainingOnCallingThread }) else {
      for queue in queues {
        queue.waitForDrainsInFlight()
      }
      return
    }
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: settleTimeout)
    for queue in queues {
      queue.waitForDrainsInFlight(timeout: max(.zero, deadline - clock.now))
    }
  }

  /// Polls the weak references until every object is gone or waits in a queue (to be
  /// drained, not waited for), or `settleTimeout` passed.
  private func waitUntilGone(_ entries: [Watched]) {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: settleTimeout)
    while entries.contains(where: Self.isUnsettled) && clock.now < deadline {
      usleep(1_000)
    }
  }

  /// `waitUntilGone` suspending on `settleClock`; a cancelled task stops waiting.
  private func settle(_ entries: [Watched]) async {
    let deadline = settleClock.now() + settleTimeout
    while entries.contains(where: Self.isUnsettled) && settleClock.now() < deadline
      && !Task.isCancelled
    {
      await settleClock.sleep(for: .milliseconds(1))
    }
  }

  /// Alive, and in no queue (an object in a queue is drained, not waited for).
  private static func isUnsettled(_ entry: Watched) -> Bool {
    guard let object = entry.object else { return false }
    return !QueueLookup(for: object).isPending
  }
}

/// The time a suspending settle wait reads and the sleep it takes: the continuous clock, or
/// a test's, which counts the sleepers instead of letting real time pass.
protocol SettleClock: Sendable {
  /// The time since an origin of the clock's choosing.
  func now() -> Duration
  func sleep(for duration: Duration) async
}

/// `ContinuousClock` and `Task.sleep`.
struct ContinuousSettleClock: SettleClock {
  private let origin = ContinuousClock.now

  func now() -> Duration { ContinuousClock.now - origin }

  func sleep(for duration: Duration) async {
    try? await Task.sleep(for: duration)
  }
}

/// One watched object: a weak reference and what a message needs once it is gone.
///
/// `@unchecked Sendable`: the tracker loads the weak reference only to learn whether the
/// object lives, its identity and its retain count; it never touches the object's state,
/// so sharing the reference across threads cannot race with the object's own users.
private struct Watched: @unchecked Sendable {
  weak var object: AnyObject?
  let typeName: String
  /// The object's address, kept inverted: a plain word equal to the address would read as
  /// a holder of the very object a holder scan is asked about.
  private let invertedAddress: UInt
  let callSite: CallSite

  init(object: AnyObject, typeName: String, address: UInt, callSite: CallSite) {
    self.object = object
    self.typeName = typeName
    self.invertedAddress = ~address
    self.callSite = callSite
  }

  /// The object's address, for messages and for `check` records once it is gone.
  var address: UInt { ~invertedAddress }
}

/// `0x…` in lower-case hex, the way the trace log writes addresses.
func hexAddress(of object: AnyObject) -> String {
  hexAddress(UInt(bitPattern: ObjectIdentifier(object)))
}

func hexAddress(_ address: UInt) -> String {
  "0x" + String(address, radix: 16)
}
