import DeallocTrace
import Dispatch
import Synchronization

/// A queue that releases objects on a background thread, some time after the caller let go.
///
/// Tearing down a large object graph (a screen's view models, caches, thousands of nodes)
/// can take milliseconds on the thread that drops the last reference. `DeallocQueue` takes
/// that last reference from the caller, keeps it for `delay`, and then releases the whole
/// batch on `target`, so the calling thread (usually the main thread) pays only for a push
/// under a lock.
///
/// The trade-off: every object outlives its last user by up to `delay`. A leak check that
/// looks during that window (a weak-reference assertion at the end of a test, a heap
/// snapshot) sees the object alive and reports a leak that is only a *delayed dealloc*.
/// The queue also holds memory that no leak tool attributes to anyone; a burst of enqueues
/// can hold many graphs at once. Use `DeallocTrace` to record what the queue does and the
/// `dealloctrace` tool to tell delayed deallocs from real leaks.
///
/// This is a port of Texture's `ASDeallocQueue`: one timer per batch (scheduled when an
/// entry arrives at an empty queue), a swap of the whole batch under the lock, and the
/// releases after unlocking. Objects' `deinit`s therefore run on a background thread and
/// must not assume the main thread.
public final class DeallocQueue: Sendable {
  /// The process-wide queue, with the default 100 ms delay on the global dispatch queue.
  public static let shared = DeallocQueue(label: "shared")

  /// The name reports use for this queue.
  public let label: String

  /// How long an entry waits, at most, after the first entry of its batch arrived.
  public let delay: Duration

  private let target: DispatchQueue
  private let state = AnnotatedMutex(State())

  /// Creates a private queue.
  ///
  /// - Parameters:
  ///   - label: the name that traces and reports show for this queue.
  ///   - delay: how long the first entry of a batch waits before the batch is released.
  ///   - target: where the timed drain runs; the global dispatch queue by default.
  public init(
    label: String,
    delay: Duration = .milliseconds(100),
    target: DispatchQueue = .global()
  ) {
    self.label = label
    self.delay = delay
    self.target = target
    QueueRegistry.all.withLock { boxes in
      boxes.removeAll { $0.queue == nil }
      boxes.append(WeakQueue(queue: self))
    }
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
  private func enqueue<T: AnyObject>(_ object: inout T?, hooked: Bool) {
    guard let taken = object.take() else { return }
    let traced = hooked && QueueTracing.isRecording
    let pending = traced ? QueueTracing.prepareEnqueue(taken) : QueueTracing.PendingEnqueue(id: 0)
    // Moved, never copied, into the queue: a copy left in this frame would keep the object
    // alive until `enqueue` returns, and a drain on another thread in that window would
    // release a "survivor" that nothing but this frame held.
    var entry: Entry? = Entry(object: consume taken, traceID: pending.id)
    let isFirstEntry = state.withLock { state in
      state.entries.append(entry.take()!)
      if traced {
        state.hasTracedEntries = true
        QueueTracing.commitEnqueue(pending, queue: label, depth: state.entries.count)
      }
      guard state.entries.count == 1 else { return false }
      state.scheduledDrains += 1
      return true
    }
    if isFirstEntry {
      scheduleDrain()
    }
  }

  /// Releases every queued object now, on the calling thread.
  ///
  /// Safe from any thread at any time, including from a `deinit` that runs during another
  /// drain: the batch is swapped out under the lock and released after unlocking, so
  /// objects enqueued by those `deinit`s form a new batch with a drain of its own.
  public func drain() {
    drain(why: .explicit)
  }

  /// The number of objects waiting to be released.
  public var pendingCount: Int {
    state.withLock { $0.entries.count }
  }

  /// Whether `object` is waiting in this queue now.
  ///
  /// Leak assertions use this to tell a delayed dealloc (still queued) from a leak. It is
  /// a linear scan under the lock, meant for tests, not for hot paths.
  public func isPending(_ object: AnyObject) -> Bool {
    let id = ObjectIdentifier(object)
    return state.withLock { state in
      state.entries.contains { ObjectIdentifier($0.object) == id }
    }
  }

  /// How many timed drains were scheduled so far (one per batch); for the queue's tests.
  package var scheduledDrainCountForTesting: Int {
    state.withLock { $0.scheduledDrains }
  }

  /// The tracer's id for `object` while it waits in this queue, so that a leak assertion's
  /// `check` record can name it; `nil` when it is not queued here or was queued untraced.
  package func traceID(of object: AnyObject) -> UInt64? {
    let id = ObjectIdentifier(object)
    return state.withLock { state in
      state.entries.first { ObjectIdentifier($0.object) == id && $0.traceID != 0 }?.traceID
    }
  }

  /// Every queue alive in the process, `shared` included, so that leak assertions can ask
  /// whether an object is waiting in any of them. Registration happens in `init`, once per
  /// queue, never on the enqueue path.
  package static var liveQueues: [DeallocQueue] {
    QueueRegistry.all.withLock { boxes in boxes.compactMap(\.queue) }
  }

  private func scheduleDrain() {
    let (seconds, attoseconds) = delay.components
    let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    target.asyncAfter(deadline: .now() + .nanoseconds(Int(max(0, nanoseconds)))) { [self] in
      drain(why: .timer)
    }
  }

  private func drain(why: QueueTracing.DrainReason) {
    var batch = state.withLock { state in
      var batch = Batch(entries: [], hasTracedEntries: state.hasTracedEntries)
      swap(&batch.entries, &state.entries)
      state.hasTracedEntries = false
      return batch
    }
    guard !batch.entries.isEmpty else { return }
    if QueueTracing.isRecording || batch.hasTracedEntries {
      // Moved out, not copied: the tracer's release must drop the last reference the
      // queue holds, or `freed` would see the batch's copy keeping the object alive.
      releaseTraced(batch.takeEntries(), why: why)
    }
    // Untraced: dropping `batch` here releases every object on this thread.
  }

  private func releaseTraced(_ entries: consuming [Entry], why: QueueTracing.DrainReason) {
    QueueTracing.recordDrain(queue: label, count: entries.count, why: why)
    while let entry = entries.popLast() {
      let id = entry.traceID
      if id != 0 {
        // The entry is consumed so that the tracer holds the queue's only reference: its
        // release is the queue's release, and `freed` observes exactly that one.
        QueueTracing.release((consume entry).takeObject(), id: id)
      }
    }
  }
}

/// One queued object and the id the tracer gave it (0 when untraced).
///
/// `@unchecked Sendable`: the queue holds the only reference it knows of and moves it to
/// the draining thread solely to release it; handing a reference to another thread for
/// its release is the queue's whole purpose, and `deinit` must tolerate that thread.
private struct Entry: @unchecked Sendable {
  let object: AnyObject
  let traceID: UInt64

  /// The object, with the entry's own reference gone (the entry is consumed).
  consuming func takeObject() -> AnyObject {
    object
  }
}

/// A swapped-out batch, carried out of the lock.
private struct Batch: @unchecked Sendable {
  var entries: [Entry]
  /// Whether any entry has a trace id, so that a drain with tracing off need not look.
  var hasTracedEntries: Bool

  mutating func takeEntries() -> [Entry] {
    var taken: [Entry] = []
    swap(&taken, &entries)
    return taken
  }
}

private struct State {
  var entries: [Entry] = []
  /// Whether an entry of the current batch was recorded (set only on the traced path).
  var hasTracedEntries = false
  /// How many timed drains this queue has scheduled; one per batch.
  var scheduledDrains = 0
}

/// Weak references to every queue created, for `DeallocQueue.liveQueues`.
private enum QueueRegistry {
  static let all = AnnotatedMutex<[WeakQueue]>([])
}

private struct WeakQueue: Sendable {
  weak var queue: DeallocQueue?
}
