import DeallocHooks
import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A queue that releases objects on a background thread, some time after the caller let go.
///
/// Why: tearing down a large object graph can take milliseconds on the thread that drops
/// the last reference. The queue takes that reference, keeps it for `delay`, and releases
/// the whole batch on `target`; the caller pays for a push under a lock.
///
/// The trade-off: every object outlives its last user by up to `delay`, so a leak check in
/// that window sees a *delayed dealloc* as a leak, and a burst of enqueues holds memory no
/// leak tool attributes to anyone. `DeallocTrace` records what the queue does, and the
/// `dealloctrace` tool tells delayed deallocs from real leaks. A port of Texture's
/// `ASDeallocQueue` (one timer per batch, the batch swapped out under the lock, released
/// after it): `deinit`s run on a background thread.
public final class DeallocQueue: Sendable {
  /// The process-wide queue, with the default delay on the global dispatch queue.
  public static let shared = DeallocQueue(label: "shared", delay: defaultDelay)

  /// The delay of ``shared`` and of queues created without one: Texture's. It is kept in the
  /// tracing seam so that the recorder's `session` record states it without importing the
  /// queue.
  public static let defaultDelay: Duration = QueueTracing.sharedQueueDelay

  /// The name reports use for this queue.
  public let label: String

  /// How long an entry waits, at most, after the first entry of its batch arrived.
  public let delay: Duration

  /// The most entries a batch collects before it is drained at once, without waiting for
  /// its timer; nil (the default) for no bound, as in `ASDeallocQueue`. A value handed over
  /// is one entry, as an object is, whatever it holds.
  public let maxPending: Int?

  private let target: DispatchQueue
  private let state = AnnotatedMutex(State())

  /// Creates a private queue.
  ///
  /// - Parameters:
  ///   - label: the name that traces and reports show for this queue.
  ///   - delay: how long the first entry of a batch waits before the batch is released.
  ///   - target: where the timed drain runs; the global dispatch queue by default.
  ///   - maxPending: a bound on what the queue holds. When a batch reaches this many entries,
  ///     its drain is dispatched to `target` at once instead of waiting for the timer (one
  ///     such drain per batch; entries that arrive before it runs join it). Why: producers
  ///     that enqueue faster than `delay` lets batches go hold every graph meanwhile (16
  ///     threads reached 3.1 GB in 5 s), and an unbounded queue is how a background
  ///     deallocation queue becomes an out-of-memory kill. The trade-off: under such load
  ///     objects die sooner than `delay` (leak checks see fewer delayed deallocs) and drains
  ///     are more frequent; a bound reached often means `target` cannot keep up anyway.
  ///     Nil, the default, keeps the faithful behaviour: one timer per batch, no bound.
  ///     Values below 1 count as 1.
  public init(
    label: String,
    delay: Duration = DeallocQueue.defaultDelay,
    target: DispatchQueue = .global(),
    maxPending: Int? = nil
  ) {
    self.label = label
    self.delay = delay
    self.target = target
    self.maxPending = maxPending.map { max(1, $0) }
    QueueRegistry.all.withLock { boxes in
      boxes.removeAll { $0.queue == nil }
      boxes.append(WeakQueue(queue: self))
    }
    // The recorder scans for holders only of objects that no queue holds; it asks here.
    QueueTracing.registerPendingLookup(DeallocQueue.pendingLookup)
    QueueTracing.registerCensusLookup(DeallocQueue.censusLookup)
    // `DEALLOCTRACE_LOG` / `DEALLOCTRACE` turn tracing on with no code change: every
    // enqueue needs a queue, so checking once at the first queue's creation covers them all.
    QueueTracing.bootstrapFromEnvironment()
  }

  /// Takes over the caller's strong reference and sets the caller's variable to `nil`.
  ///
  /// The caller can no longer use or release the object; the queue now holds what should
  /// be the last strong reference and releases it in the next batch. A `nil` variable is a
  /// no-op. If something else still holds the object, the release does not free it; with
  /// tracing on, that shows up as a *survivor* (`freed: false`).
  public func releaseInBackground<T: AnyObject>(_ object: inout T?) {
    enqueue(&object, hooked: true)
  }

  /// The same enqueue with no tracing hook compiled in at all: the benchmark's baseline for
  /// what the hook costs when tracing is off.
  package func releaseInBackgroundWithoutTracingHook<T: AnyObject>(_ object: inout T?) {
    enqueue(&object, hooked: false)
  }

  /// `hooked` is a constant at both call sites, so the unhooked copy has no tracing code.
  @inline(__always)
  func enqueue<T: AnyObject>(_ object: inout T?, hooked: Bool) {
    guard let taken = object.take() else { return }
    let traced = hooked && QueueTracing.isRecording
    let id = traced ? QueueTracing.prepareEnqueue(taken) : 0
    // Moved, never copied, into the queue: a copy left in this frame would keep the object
    // alive until `enqueue` returns, and a drain on another thread in that window would
    // release a "survivor" that nothing but this frame held.
    push(Entry(object: consume taken, traceID: id), commit: traced ? .object : .untraced)
  }

  /// Appends `entry` to the current batch under the lock, commits its record as `commit`
  /// says, and schedules what the batch now needs (its timer, its drain at the bound).
  @inline(__always)
  func push(_ entry: consuming Entry, commit: EnqueueCommit) {
    let id = entry.traceID
    // Taken out of an optional inside the lock: the closure cannot consume a parameter.
    var pending: Entry? = consume entry
    let drains = state.withLock { state -> BatchDrains in
      state.entries.append(pending.take()!)
      if commit.isTraced {
        if id != 0 {
          state.tracedEntries += 1
        }
        QueueTracing.commitEnqueue(
          id: id, queue: label, depth: state.entries.count, elementCount: commit.elementCount)
      }
      var drains = BatchDrains()
      if state.entries.count == 1 {
        state.scheduledDrains += 1
        drains.timer = state.currentBatch
      }
      if let maxPending, state.entries.count >= maxPending, !state.boundDrainScheduled {
        state.boundDrainScheduled = true
        state.boundDrains += 1
        drains.bound = state.currentBatch
      }
      return drains
    }
    if let batch = drains.timer {
      scheduleDrain(of: batch)
    }
    if let batch = drains.bound {
      target.async { [self] in
        drain(why: .bound, onlyBatch: batch)
        QueueTracing.drainDidFinish()
      }
    }
  }

  /// Releases every queued object now, on the calling thread.
  ///
  /// Safe from any thread at any time, including from a `deinit` that runs during another
  /// drain: the batch is swapped out under the lock and released after unlocking, so
  /// objects enqueued by those `deinit`s form a new batch with a drain of its own. The
  /// drained batch's timer still fires later but finds its batch gone and does nothing, so
  /// the next batch waits its full `delay` after its own first entry.
  public func drain() {
    drain(why: .explicit)
    QueueTracing.drainDidFinish()
  }

  /// The number of entries waiting to be released: each object handed over, and each value
  /// (an array of 10,000 objects is one entry), as `maxPending` counts them.
  public var pendingCount: Int {
    state.withLock { $0.entries.count }
  }

  /// Whether `object` is waiting in this queue now: an object handed over itself.
  ///
  /// Leak assertions use this to tell a delayed dealloc (still queued) from a leak. It is
  /// a linear scan under the lock, meant for tests, not for hot paths. It speaks of objects
  /// only: an object reachable from a queued value (an element of a queued array) is not
  /// pending itself, since finding it would mean walking every queued value, so a leak
  /// assertion on it sees an object alive in no queue. Hand such an object over by itself
  /// (or drain the queue) where a test asserts on it.
  public func isPending(_ object: AnyObject) -> Bool {
    isPending(address: UInt(bitPattern: ObjectIdentifier(object)))
  }

  /// Whether the object at `address` is waiting in this queue now (`isPending(_:)` for a
  /// caller that holds no reference to it).
  package func isPending(address: UInt) -> Bool {
    state.withLock { state in
      state.entries.contains { UInt(bitPattern: ObjectIdentifier($0.object)) == address }
    }
  }

  /// The addresses of the objects waiting now, each XOR-ed with `key`, for the leak census
  /// (which must not find the addresses themselves as references in this array).
  package func pendingAddresses(hiddenWith key: UInt) -> [UInt] {
    state.withLock { state in
      state.entries.map { UInt(bitPattern: ObjectIdentifier($0.object)) ^ key }
    }
  }

  /// The recorder's lookup, made once: a new function value per queue would be thrown away
  /// by every registration after the first.
  static let pendingLookup = QueueTracing.PendingLookup(DeallocQueue.isPendingInAnyQueue(address:))

  /// Whether the object at `address` is waiting in any live queue: the recorder's question
  /// before it scans for a checked object's holders (see `QueueTracing`).
  @Sendable
  package static func isPendingInAnyQueue(address: UInt) -> Bool {
    liveQueues.contains { $0.isPending(address: address) }
  }

  /// How many timed drains were scheduled so far (one per batch); for the queue's tests.
  package var scheduledDrainCountForTesting: Int {
    state.withLock { $0.scheduledDrains }
  }

  /// How many batches reached `maxPending` and had their drain dispatched at once.
  package var boundDrainCountForTesting: Int {
    state.withLock { $0.boundDrains }
  }

  /// The tracer's id for `object` while it waits in this queue, so that a leak assertion's
  /// `check` record can name it; `nil` when it is not queued here or was queued untraced.
  package func traceID(of object: AnyObject) -> UInt64? {
    let id = ObjectIdentifier(object)
    return state.withLock { state in
      state.entries.first { ObjectIdentifier($0.object) == id && $0.traceID != 0 }?.traceID
    }
  }

  /// Blocks until every drain of this queue that another thread began before this call has
  /// released its whole batch; returns `false` if `timeout` passed first.
  ///
  /// Why: while a drain releases its swapped-out batch, its objects are neither pending nor
  /// freed, and a leak assertion must wait for the drain itself rather than guess a time
  /// (the drain signals a semaphore; nothing polls). Drains on the calling thread (below it
  /// on its stack) and drains that begin later are not waited for, so a busy queue cannot
  /// starve the caller.
  ///
  /// The trade-off of no `timeout`: a `deinit` that never returns blocks the caller too, and
  /// two threads waiting from inside drains would wait for each other forever; a caller
  /// inside a drain (`isDrainingOnCallingThread`) must pass a `timeout`.
  @discardableResult
  package func waitForDrainsInFlight(timeout: Duration? = nil) -> Bool {
    let waiter = state.withLock { state -> DrainWaiter? in
      let waiter = DrainWaiter(
        batchesBefore: state.currentBatch, thread: pthread_self(),
        semaphore: DispatchSemaphore(value: 0))
      guard !waiter.isSatisfied(by: state.drainsInFlight) else { return nil }
      state.drainWaiters.append(waiter)
      return waiter
    }
    guard let waiter else { return true }
    guard let timeout else {
      waiter.semaphore.wait()
      // The drain signalled under the lock; taking it orders its releases before our
      // return for ThreadSanitizer, which does not see the semaphore's edge.
      state.withLock { _ in }
      return true
    }
    let result = waiter.semaphore.wait(timeout: .now() + .nanoseconds(timeout.wholeNanoseconds))
    return state.withLock { state in
      guard result == .timedOut else { return true }
      // Timed out, unless the drain signalled between the timeout and this lock.
      let before = state.drainWaiters.count
      state.drainWaiters.removeAll { $0.semaphore === waiter.semaphore }
      return state.drainWaiters.count == before
    }
  }

  /// Whether the calling thread is inside a drain of this queue now (a `deinit` that the
  /// drain runs, or code it calls): such a caller must not wait for other drains without a
  /// timeout (see `waitForDrainsInFlight(timeout:)`).
  package var isDrainingOnCallingThread: Bool {
    let thread = pthread_self()
    return state.withLock { state in
      state.drainsInFlight.contains { pthread_equal($0.thread, thread) != 0 }
    }
  }

  /// How many drains are releasing a swapped-out batch now; for the queue's tests.
  package var drainsInFlightCountForTesting: Int {
    state.withLock { $0.drainsInFlight.count }
  }

  /// Every queue alive in the process, `shared` included, so that leak assertions can ask
  /// whether an object is waiting in any of them. Registration happens in `init`, once per
  /// queue, never on the enqueue path.
  package static var liveQueues: [DeallocQueue] {
    QueueRegistry.all.withLock { boxes in boxes.compactMap(\.queue) }
  }

  /// Schedules the timed drain of batch `number` on `target`, `delay` from now. The timer
  /// drains only that batch: if an explicit drain took it first, the timer finds a later
  /// batch (or none) and does nothing, so a later batch always gets its full `delay`.
  ///
  /// The timer is ``DrainTimer``, not `asyncAfter`: arming it wakes no thread, so the caller
  /// whose enqueue starts a batch pays a system call, not a wake of another core.
  private func scheduleDrain(of number: UInt64) {
    DrainTimer.schedule(afterNanoseconds: delay.wholeNanoseconds) { [self] in
      target.async { [self] in
        drain(why: .timer, onlyBatch: number)
        QueueTracing.drainDidFinish()
      }
    }
  }

  /// Swaps the current batch out (all of it, or nothing when `onlyBatch` names a batch that
  /// is gone) and releases it on this thread, counted as a drain in flight meanwhile.
  /// Never inlined: its frame, which held the objects, is gone when the caller lets the
  /// recorder scrub the dead stack (`QueueTracing.drainDidFinish`).
  @inline(never)
  private func drain(why: DrainReason, onlyBatch: UInt64? = nil) {
    // Bound once, by `guard var`: a second binding would be another holder of the array,
    // and the objects would be released when it goes, not where this function says.
    guard var batch = takeBatch(onlyBatch) else { return }
    if QueueTracing.isRecording || batch.tracedEntries > 0 {
      // Moved out, not copied: the tracer's release must drop the last reference the
      // queue holds, or `freed` would see the batch's copy keeping the object alive.
      releaseTraced(batch.takeEntries(), traced: batch.tracedEntries, why: why)
    } else {
      // Untraced: the array was the only holder, so this releases every object here.
      batch.entries = []
    }
    finishDrain(of: batch.number)
  }

  /// Swaps the current batch out and counts its drain in flight; `nil` when the queue is
  /// empty or `onlyBatch` names a batch that an earlier drain took.
  private func takeBatch(_ onlyBatch: UInt64?) -> Batch? {
    let thread = pthread_self()
    return state.withLock { state in
      guard !state.entries.isEmpty, onlyBatch.map({ $0 == state.currentBatch }) ?? true else {
        return nil
      }
      var batch = Batch(
        number: state.currentBatch, entries: [], tracedEntries: state.tracedEntries)
      swap(&batch.entries, &state.entries)
      state.tracedEntries = 0
      state.boundDrainScheduled = false
      state.currentBatch &+= 1
      state.drainsInFlight.append(DrainInFlight(batch: batch.number, thread: thread))
      return batch
    }
  }

  private func releaseTraced(
    _ entries: consuming [Entry], traced: Int, why: DrainReason
  ) {
    // `n` counts the objects that have `enqueue` records, the ones a reader can match.
    QueueTracing.recordDrain(queue: label, count: traced, why: why)
    while let entry = entries.popLast() {
      let id = entry.traceID
      if id != 0 {
        // The entry is consumed so that the tracer holds the queue's only reference: its
        // release is the queue's release, and `freed` observes exactly that one.
        QueueTracing.release((consume entry).takeObject(), id: id)
      }
    }
  }

  /// Marks the drain of batch `number` finished and wakes the waiters it was holding up.
  private func finishDrain(of number: UInt64) {
    state.withLock { state in
      state.drainsInFlight.removeAll { $0.batch == number }
      guard !state.drainWaiters.isEmpty else { return }
      let inFlight = state.drainsInFlight
      state.drainWaiters.removeAll { waiter in
        guard waiter.isSatisfied(by: inFlight) else { return false }
        waiter.semaphore.signal()
        return true
      }
    }
  }
}

/// One queued object (or the box of a queued value, `ValueBox`) and the id the tracer gave it
/// (0 when untraced).
///
/// `@unchecked Sendable`: the queue holds the only reference it knows of and moves it to
/// the draining thread solely to release it; handing a reference to another thread for
/// its release is the queue's whole purpose, and `deinit` must tolerate that thread.
struct Entry: @unchecked Sendable {
  let object: AnyObject
  let traceID: UInt64

  /// The object, with the entry's own reference gone (the entry is consumed).
  consuming func takeObject() -> AnyObject {
    object
  }
}

/// What an enqueue commits to the recorder under the lock: nothing (untraced), an object's
/// record, or a value's with its element count when it is a collection.
///
/// One word, so that the lock's closure captures no more for it than the flag it replaced:
/// the class path's enqueue stays as it was, store for store.
struct EnqueueCommit {
  /// -2: untraced; -1: a record without a count; otherwise the count.
  private let word: Int

  static let untraced = EnqueueCommit(word: -2)
  static let object = EnqueueCommit(word: -1)

  static func value(elementCount: Int?) -> EnqueueCommit {
    EnqueueCommit(word: elementCount.map { max(0, $0) } ?? -1)
  }

  var isTraced: Bool { word != -2 }
  var elementCount: Int? { word >= 0 ? word : nil }
}

/// A swapped-out batch, carried out of the lock.
private struct Batch: @unchecked Sendable {
  /// Which batch of the queue it is (`State.currentBatch` when it was swapped out).
  let number: UInt64
  var entries: [Entry]
  /// How many entries have a trace id: a drain with none and tracing off need not look,
  /// and the `drain` record's `n` counts these.
  let tracedEntries: Int

  mutating func takeEntries() -> [Entry] {
    var taken: [Entry] = []
    swap(&taken, &entries)
    return taken
  }
}

private struct State {
  var entries: [Entry] = []
  /// How many entries of the current batch were recorded (counted only on the traced path).
  var tracedEntries = 0
  /// The number of the batch being filled. Each swap closes it and starts the next, so a
  /// timer that captured an older number knows an explicit drain already took its batch.
  var currentBatch: UInt64 = 0
  /// How many timed drains this queue has scheduled; one per batch.
  var scheduledDrains = 0
  /// Whether the current batch reached `maxPending` and its drain is on its way.
  var boundDrainScheduled = false
  /// How many batches reached `maxPending`.
  var boundDrains = 0
  /// The drains releasing a swapped-out batch now: its objects are in neither the queue
  /// nor freed yet, which is what `waitForDrainsInFlight` waits out.
  var drainsInFlight: [DrainInFlight] = []
  var drainWaiters: [DrainWaiter] = []
}

/// The drains an enqueue has to schedule, decided under the lock: the batch's timer (for a
/// batch's first entry) and its drain at the bound (for the entry that reached `maxPending`).
private struct BatchDrains {
  var timer: UInt64?
  var bound: UInt64?
}

/// A drain releasing its batch on `thread`.
private struct DrainInFlight {
  let batch: UInt64
  let thread: pthread_t
}

/// A thread blocked in `waitForDrainsInFlight` until the drains of batches before
/// `batchesBefore`, other than its own thread's, have finished.
private struct DrainWaiter {
  let batchesBefore: UInt64
  let thread: pthread_t
  let semaphore: DispatchSemaphore

  func isSatisfied(by inFlight: [DrainInFlight]) -> Bool {
    !inFlight.contains { drain in
      drain.batch < batchesBefore && pthread_equal(drain.thread, thread) == 0
    }
  }
}

/// Weak references to every queue created, for `DeallocQueue.liveQueues`.
private enum QueueRegistry {
  static let all = AnnotatedMutex<[WeakQueue]>([])
}

private struct WeakQueue: Sendable {
  weak var queue: DeallocQueue?
}
