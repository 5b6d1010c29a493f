import CHolders
import CTraceRuntime
import CUnwind
import DeallocHooks

/// The recorder's side of the queue's hooks (`QueueHooks`): what each step of a queue's
/// work records. Installed by `Tracer` when a session starts.
enum QueueRecorder {
  static let hooks = QueueHooks(
    prepareEnqueue: prepareTracedEnqueue(address:metatype:),
    commitEnqueue: commitTracedEnqueue(id:queue:depth:elementCount:),
    recordDrain: recordDrain(queue:count:why:),
    release: releaseTraced(_:id:),
    drainDidFinish: scrubAfterDrain)
}

/// Lets the queue start the recorder from the environment: the weak reference in
/// `CQueueRuntime` (CDeallocHooks.h) resolves to this when the recorder is linked into the
/// process.
@_cdecl("dealloctrace_start_from_environment")
package func startFromEnvironment() {
  Tracer.startFromEnvironmentOnce()
}

/// Takes the object's id and captures the enqueue stack on the calling thread, before the
/// queue's lock; the rest of the record waits in the thread's `ctrace_thread_pending()`,
/// which nothing else touches before the commit (the queue runs no user code in between).
///
/// A function, not a closure or a method, so that the hook calls it with no thunk frame in
/// between: the backtrace cut is one frame above this one (`QueueTracing.prepareEnqueue`).
@inline(never)
private func prepareTracedEnqueue(address: UnsafeRawPointer, metatype: UnsafeRawPointer) -> UInt64 {
  // The published session is retained for the life of the process (`Tracer.Current`), so
  // the hot path borrows it without a retain/release pair.
  guard let published = ctrace_current_session(), QueueTracing.isRecording else { return 0 }
  let borrowed = Unmanaged<TraceSession>.fromOpaque(published)
  let pending = ctrace_thread_pending()!
  // The caller's strong reference, now the queue's `taken`, is the one counted here.
  pending.pointee.retain_count = ctrace_retain_count(address)
  pending.pointee.frame_count = 0
  let depth = borrowed._withUnsafeGuaranteedRef { $0.frames }
  if depth > 0 {
    // Captured here, in this function's own frame and not in a closure, because the cut
    // is by address: one frame above this function, whatever the optimizer inlined below.
    let frames = UnsafeMutableRawPointer(pending).advanced(
      by: MemoryLayout<ctrace_pending_enqueue>.offset(of: \.frames)!
    ).assumingMemoryBound(to: UInt.self)
    pending.pointee.frame_count = Int64(cunwind_backtrace_above_caller(frames, Int32(depth), 1))
    // A type under retain/release history notes the hand-over (nothing for any other type).
    cholders_history_note_enqueue(
      UInt(bitPattern: address), frames, Int(pending.pointee.frame_count),
      Int64(pending.pointee.retain_count))
  }
  // Hidden: the per-thread record stays in memory that a holder scan reads.
  pending.pointee.address = HiddenAddress.hide(UInt(bitPattern: address))
  pending.pointee.metatype = metatype
  pending.pointee.session = UnsafeRawPointer(published)
  ctrace_test_before_enqueue_id()
  let id = borrowed._withUnsafeGuaranteedRef { session in
    session.announceCurrentThread()
    session.buffer.waitForRoom()
    pending.pointee.time = session.now()
    return ctrace_next_object_id()
  }
  // A session finished (and maybe another started) since the load: the id may be past the
  // next session's first, which would then record this object's release without its
  // enqueue. The object goes untraced instead, as one enqueued just after `finish()`.
  guard ctrace_session_still_current(published) != 0 else {
    pending.pointee.session = nil
    return 0
  }
  return id
}

/// Hands the prepared enqueue record over, under the queue's lock. Never waits: the room
/// was waited for in `prepareTracedEnqueue`, before the lock.
private func commitTracedEnqueue(id: UInt64, queue: String, depth: Int, elementCount: Int?) {
  // 0: `prepareTracedEnqueue` found no session, or lost it; the pending record is stale.
  guard id != 0 else { return }
  let saved = ctrace_thread_pending()!
  guard let pointer = saved.pointee.session, let metatype = saved.pointee.metatype else { return }
  let enqueue = TraceEvent.Enqueue(
    objectID: id, hiddenAddress: saved.pointee.address, metatype: metatype, queue: queue,
    depth: depth, retainCount: saved.pointee.retain_count, elementCount: elementCount)
  let event = TraceEvent(
    time: saved.pointee.time, threadID: ctrace_thread_id(), .enqueue(enqueue))
  let frames = UnsafeRawPointer(saved).advanced(
    by: MemoryLayout<ctrace_pending_enqueue>.offset(of: \.frames)!
  ).assumingMemoryBound(to: UInt.self)
  // A session that finished in between refuses the push; the object then goes untraced.
  // Borrowed, not retained: published sessions live as long as the process.
  _ = Unmanaged<TraceSession>.fromOpaque(pointer)._withUnsafeGuaranteedRef { session in
    session.buffer.push(
      event, frames: frames, frameCount: Int(saved.pointee.frame_count), mayWait: false)
  }
}

/// Records that `queue` began releasing a batch on the calling thread, then looks at the
/// survivors (each drain is a moment when earlier survivors may have died).
private func recordDrain(queue: String, count: Int, why: DrainReason) {
  guard let session = Tracer.session() else { return }
  session.announceCurrentThread()
  session.buffer.push(
    TraceEvent(
      time: session.now(), threadID: ctrace_thread_id(),
      .drain(queue: queue, count: count, why: why)))
  Tracer.checkSurvivors(session)
}

/// Drops the queue's reference to `object` and records whether that release freed it.
///
/// `freed` is observed, not inferred from a retain count: a weak reference taken before
/// the release loads nil after it exactly when the last strong reference went away at our
/// release or later (the runtime marks the object deiniting as it drops that reference);
/// otherwise the object is a survivor, watched until it dies. The one window: a holder that
/// lets go between our release and our load makes a survivor look freed by us; the report
/// calls both "freed on time", which is what they are.
///
/// The session is found by the object's id, not as the current one: a release racing
/// `finish()` is offered to the closing session, which refuses it and counts it in `end`'s
/// `lost`, instead of leaving the object counted as `pending`.
private func releaseTraced(_ object: consuming AnyObject, id: UInt64) {
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
  guard let alive = survivor.object else {
    session.announceCurrentThread()
    session.buffer.push(
      TraceEvent(
        time: session.now(), threadID: ctrace_thread_id(),
        .release(objectID: id, outcome: .freed)))
    return
  }
  // `alive` is the look's strong reference; the rest are the holders'.
  let holders = max(
    0,
    ctrace_retain_count(Unmanaged.passUnretained(alive).toOpaque()) - Survivor.referencesOfALook)
  recordSurvivor(survivor, retainCount: holders, keptAlive: consume alive, in: session)
}

/// A survivor's record and its place on the watch list go together, under the list's lock:
/// `finish()`'s last look (which closes the buffer under that lock) either sees the
/// survivor, or comes first and the record is refused and counted.
///
/// With holders on, `keptAlive` keeps the survivor alive through its holder scan (a
/// reference on this thread's stack, which the scan does not read) and is let go after the
/// list's lock, so that no `deinit` runs under it. Without, it is dropped before the lock.
private func recordSurvivor(
  _ survivor: Survivor, retainCount: Int, keptAlive: consuming AnyObject,
  in session: TraceSession
) {
  session.announceCurrentThread()
  let event = TraceEvent(
    time: session.now(), threadID: ctrace_thread_id(),
    .release(objectID: survivor.id, outcome: .survived(retainCount: retainCount)))
  guard let budget = session.holderBudget else {
    _ = consume keptAlive
    session.survivors.withLock { list in
      guard session.buffer.push(event) else { return }
      list.append(survivor)
      session.survivorCount.add(1, ordering: .relaxed)
    }
    return
  }
  if !budget.knowsStack(of: survivor.id) {
    // The holder cap's signature needs the enqueue stack's id, which the writer assigns:
    // an enqueue drained at once may not be formatted yet. Bounded by one writer pass.
    session.buffer.waitUntilWritten()
  }
  Tracer.withSurvivorsQuiet(session) { list in
    guard session.buffer.push(event) else { return }
    list.append(survivor)
    session.survivorCount.add(1, ordering: .relaxed)
    Tracer.recordHoldersAfterRelease(of: keptAlive, id: survivor.id, in: session)
  }
}

/// Clears the addresses a drain's releases left in this thread's dead stack, when the
/// session records holders: a scan from another thread would read them as holders.
private func scrubAfterDrain() {
  guard let session = Tracer.Latest.load(), session.holderBudget != nil else { return }
  ctrace_scrub_dead_stack()
}
