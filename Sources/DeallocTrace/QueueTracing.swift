import CUnwind

/// The seam between `DeallocQueue` and the recorder.
///
/// The queue calls these hooks only when `isRecording` is true, so that with tracing off
/// it pays one predictable branch and nothing else. `package` access keeps the seam out of
/// the public API: applications use `DeallocTrace`, never these hooks.
package enum QueueTracing {
  /// Why a batch is being released.
  package enum DrainReason: String, Sendable {
    /// The queue's delay after its first entry elapsed.
    case timer
    /// Someone called `drain()`.
    case explicit
    /// The batch reached the queue's `maxPending` and was drained at once.
    case bound

    /// How a `drain` event carries the reason to the writer (in `TraceEvent.retainCount`).
    var traceCode: Int {
      switch self {
      case .timer: 0
      case .explicit: 1
      case .bound: 2
      }
    }

    init(traceCode: Int) {
      switch traceCode {
      case 0: self = .timer
      case 2: self = .bound
      default: self = .explicit
      }
    }
  }

  /// A captured, not yet committed enqueue: made on the caller's thread before the queue's
  /// lock is taken, so that the expensive part (the stack) is outside the lock. Only the id
  /// travels through the queue; the rest waits in the thread's `cunwind_thread_pending()`,
  /// which nothing else can touch in between: the queue runs no user code from `prepare`
  /// to `commit`.
  package struct PendingEnqueue: Sendable {
    /// The object's session-unique id; 0 when nothing is being recorded.
    package var id: UInt64

    package init(id: UInt64) {
      self.id = id
    }
  }

  /// The drain delay of `DeallocQueue.shared`, defined here so that the `session` record's
  /// `delay_ms` states it without the recorder importing the queue: the shared queue is
  /// created with this delay, and the header reads the same constant, whichever of the two
  /// comes first.
  package static let sharedQueueDelay = Duration.milliseconds(100)

  /// Whether the tracer is recording now. One relaxed load of a C global, inlined.
  @inlinable
  package static var isRecording: Bool {
    @inline(__always) get { cunwind_tracing_is_on() != 0 }
  }

  /// Turns tracing on when `DEALLOCTRACE_LOG` or `DEALLOCTRACE` is set. The queue calls
  /// this from its initializer, so every process that creates a queue is covered with no
  /// code change; after the first call it costs one lock, on queue creation only.
  package static func bootstrapFromEnvironment() {
    Tracer.startFromEnvironmentOnce()
  }

  /// Allocates the object's id and captures the enqueue stack on the calling thread.
  ///
  /// Generic so that the object reaches the tracer without a conversion to `AnyObject`
  /// (which retains in debug builds and would skew `rc`); the work is in the non-generic
  /// half, so no generic metadata is instantiated per call. Both are `@inline(never)`:
  /// the backtrace cut counts their frames.
  @inline(never)
  package static func prepareEnqueue<T: AnyObject>(_ object: T) -> PendingEnqueue {
    prepareEnqueue(
      address: unsafeBitCast(object, to: UnsafeRawPointer.self),
      metatype: unsafeBitCast(type(of: object) as AnyObject.Type, to: UnsafeRawPointer.self))
  }

  @inline(never)
  static func prepareEnqueue(
    address: UnsafeRawPointer, metatype: UnsafeRawPointer
  ) -> PendingEnqueue {
    // The published session is retained for the life of the process (`Tracer.Current`), so
    // the hot path borrows it without a retain/release pair.
    guard let published = cunwind_current_session(), cunwind_tracing_is_on() != 0 else {
      return PendingEnqueue(id: 0)
    }
    let borrowed = Unmanaged<TraceSession>.fromOpaque(published)
    let pending = cunwind_thread_pending()!
    // The caller's strong reference, now the queue's `taken`, is the one counted here.
    pending.pointee.retain_count = cunwind_retain_count(address)
    pending.pointee.frame_count = 0
    let depth = borrowed._withUnsafeGuaranteedRef { $0.frames }
    if depth > 0 {
      // Captured here, in this function's own frame and not in a closure, because the cut
      // is by address: one frame (the generic half) above this function, whatever the
      // optimizer inlined below.
      let frames = UnsafeMutableRawPointer(pending).advanced(
        by: MemoryLayout<cunwind_pending_enqueue>.offset(of: \.frames)!
      ).assumingMemoryBound(to: UInt.self)
      pending.pointee.frame_count = Int64(cunwind_backtrace_above_caller(frames, Int32(depth), 1))
    }
    // Hidden: the per-thread record stays in memory that a holder scan reads.
    pending.pointee.address = HiddenAddress.hide(UInt(bitPattern: address))
    pending.pointee.metatype = metatype
    pending.pointee.session = UnsafeRawPointer(published)
    return borrowed._withUnsafeGuaranteedRef { session in
      session.announceCurrentThread()
      session.buffer.waitForRoom()
      pending.pointee.time = session.now()
      return PendingEnqueue(id: cunwind_next_object_id())
    }
  }

  /// Hands the enqueue record over. Called while the queue's lock is held, right after the
  /// push, so that the record precedes any `drain` or `release` that can name the object.
  /// Never waits: the room was waited for in `prepareEnqueue`, before the lock.
  package static func commitEnqueue(_ pending: PendingEnqueue, queue: String, depth: Int) {
    let saved = cunwind_thread_pending()!
    guard pending.id != 0, let pointer = saved.pointee.session else { return }
    // A session that finished in between refuses the push; the object then goes untraced.
    // Borrowed, not retained: published sessions live as long as the process.
    Unmanaged<TraceSession>.fromOpaque(pointer)._withUnsafeGuaranteedRef { session in
      commit(pending, saved: saved, queue: queue, depth: depth, in: session)
    }
  }

  @inline(__always)
  private static func commit(
    _ pending: PendingEnqueue, saved: UnsafeMutablePointer<cunwind_pending_enqueue>,
    queue: String, depth: Int, in session: TraceSession
  ) {
    var event = TraceEvent(kind: .enqueue)
    event.time = saved.pointee.time
    event.threadID = cunwind_thread_id()
    event.objectID = pending.id
    event.hiddenAddress = saved.pointee.address
    event.metatype = saved.pointee.metatype
    event.retainCount = saved.pointee.retain_count
    event.count = depth
    event.text = queue
    let frames = UnsafeRawPointer(saved).advanced(
      by: MemoryLayout<cunwind_pending_enqueue>.offset(of: \.frames)!
    ).assumingMemoryBound(to: UInt.self)
    session.buffer.push(
      event, frames: frames, frameCount: Int(saved.pointee.frame_count), mayWait: false)
  }

  /// Records that `queue` began releasing a batch on the calling thread, then looks at the
  /// survivors (each drain is a moment when earlier survivors may have died).
  ///
  /// - Parameter count: the `drain` record's `n`: how many entries of the batch carry a
  ///   trace id (`traceID != 0`), i.e. how many `release` records the drain is about to
  ///   offer. Untraced entries (enqueued while tracing was off) have no `enqueue` record,
  ///   so counting them would make `n` disagree with the releases that follow.
  package static func recordDrain(queue: String, count: Int, why: DrainReason) {
    guard let session = Tracer.session() else { return }
    session.announceCurrentThread()
    var event = TraceEvent(kind: .drain)
    event.time = session.now()
    event.threadID = cunwind_thread_id()
    event.count = count
    event.flag = why == .timer
    event.retainCount = why.traceCode
    event.text = queue
    session.buffer.push(event)
    Tracer.checkSurvivors(session)
  }

  /// Drops the queue's reference to `object` and records whether that release freed it.
  ///
  /// `freed` is observed, not inferred from a retain count: a weak reference is taken
  /// before the release and loaded after it. The runtime marks an object as deiniting in
  /// the same atomic operation that drops its last strong reference, and from then on weak
  /// loads give nil; before our release we hold a strong reference, so the object cannot be
  /// deiniting yet. Hence a nil load means the last strong reference went away at our
  /// release or after it; a non-nil load means the object outlived our release (someone
  /// else holds it): `freed: false`, a survivor, watched until it dies.
  ///
  /// The one window: another thread that held the object and drops it in the few
  /// nanoseconds between our release and our load makes the object look freed by us. Its
  /// reference existed at our release, so strictly that is a survivor that died at once;
  /// no API short of hooking `swift_release` tells the two apart. Reading the retain count
  /// first would not close it either (the count can change between the read and the
  /// release). The report treats both outcomes as "freed on time", which is what they are.
  ///
  /// The session is found by the object's id, not as the current one: a release racing
  /// `finish()` (or exit) is offered to the closing session, which refuses it and counts it
  /// in `end`'s `lost`, instead of leaving the object counted as `pending`.
  package static func release(_ object: consuming AnyObject, id: UInt64) {
    let session = Tracer.session(owning: id)
    // Counted before the `deinit` can run (at the `consume`), so that the writer can wait
    // for it; only while the session is open, so the wait covers releases under way at
    // the close and a drain that goes on releasing cannot stretch it.
    let underWay = session.flatMap { $0.buffer.hasStopped ? nil : $0 }
    underWay?.releasesUnderWay.add(1, ordering: .sequentiallyConsistent)
    defer { underWay?.releasesUnderWay.subtract(1, ordering: .sequentiallyConsistent) }
    // The weak reference is made in a function of its own, so no strong copy of ours can
    // outlive the `consume` below (a local `let` could, until the end of this scope).
    let survivor = session == nil ? nil : Survivor.watching(object, id: id)
    _ = consume object
    guard let session, let survivor else { return }
    var event = TraceEvent(kind: .release)
    event.objectID = id
    if let alive = survivor.object {
      // `alive` is one strong reference of ours; the rest are the holders'.
      event.count = max(0, cunwind_retain_count(Unmanaged.passUnretained(alive).toOpaque()) - 1)
      event.flag = false
    } else {
      event.flag = true
    }
    // With holders on, a survivor is kept alive through its holder scan (by a reference on
    // this thread's stack, which the scan does not read), and let go after the survivor
    // list's lock, so that no `deinit` runs under it. Taken after `rc` was read.
    let alive = event.flag || session.holderBudget == nil ? nil : survivor.object
    session.announceCurrentThread()
    event.time = session.now()
    event.threadID = cunwind_thread_id()
    guard !event.flag else {
      session.buffer.push(event)
      return
    }
    // A survivor's record and its place on the watch list go together, under the list's
    // lock: `finish()`'s last look (which closes the buffer under that lock) either sees the
    // survivor, or comes first and the record is refused and counted.
    if let budget = session.holderBudget, !budget.knowsStack(of: id) {
      // The holder cap's signature needs the enqueue stack's id, which the writer assigns:
      // an enqueue drained at once may not be formatted yet. Bounded by one writer pass.
      session.buffer.waitUntilWritten()
    }
    guard let alive else {
      session.survivors.withLock { list in
        guard session.buffer.push(event) else { return }
        list.append(survivor)
        session.survivorCount.add(1, ordering: .relaxed)
      }
      return
    }
    Tracer.withSurvivorsQuiet(session) { list in
      guard session.buffer.push(event) else { return }
      list.append(survivor)
      session.survivorCount.add(1, ordering: .relaxed)
      Tracer.recordHoldersAfterRelease(of: alive, id: id, in: session)
    }
  }

  /// Clears the addresses a drain's releases left in this thread's dead stack, when the
  /// session records holders: a scan from another thread would read them as holders. The
  /// queue calls it after a traced drain, outside the frames that held the objects.
  package static func drainDidFinish() {
    guard let session = Tracer.Latest.load(), session.holderBudget != nil else { return }
    cunwind_scrub_dead_stack()
  }

  /// Asks the queues whether the object at `address` waits in one of them; registered by
  /// `DeallocQueue` when its first queue is created (the recorder does not import it).
  private static let pendingLookup = AnnotatedMutex<(@Sendable (UInt) -> Bool)?>(nil)

  /// Lets the queue answer "is the object at this address waiting in any queue" for the
  /// recorder, which scans for holders only of objects that no queue holds (a queued one
  /// is a delayed dealloc, and the queue would be its holder). Idempotent.
  package static func registerPendingLookup(_ lookup: @escaping @Sendable (UInt) -> Bool) {
    pendingLookup.withLock { registered in
      if registered == nil { registered = lookup }
    }
  }

  /// Whether the object at `address` waits in any queue (false before any queue exists).
  static func isPendingInAnyQueue(address: UInt) -> Bool {
    guard let lookup = pendingLookup.withLock({ $0 }) else { return false }
    return lookup(address)
  }
}
