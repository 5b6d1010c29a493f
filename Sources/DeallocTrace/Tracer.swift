import CTraceRuntime
import CUnwind
import DeallocHooks
import Dispatch
import Glibc
import Synchronization

/// The recorder's process-wide state: the current session and its life cycle.
///
/// Recording threads reach the current session with one atomic load (`Current`), never a
/// lock; `control` serialises only `start`, `finish` and failures.
enum Tracer {
  /// The session recording now. Sessions are retained forever once published, so a thread
  /// that loaded one may keep using it after `finish()` (its pushes are then refused).
  /// Kept in a C global (`ctrace_current_session`) so the hot path pays no `swift_once`.
  enum Current {
    static func load() -> TraceSession? {
      guard let pointer = ctrace_current_session() else { return nil }
      return Unmanaged<TraceSession>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Publishes `session`, retaining it forever; nil unpublishes.
    static func store(_ session: TraceSession?) {
      ctrace_set_current_session(session.map { Unmanaged.passRetained($0).toOpaque() })
    }
  }

  /// The session started last, still reachable after `finish()` unpublished it (it is
  /// retained forever by `Current.store`), so that releases of the objects it traced are
  /// still offered to it: refused and counted while it closes, skipped once it is over.
  /// Cleared in a forked child, which must never touch its parent's session.
  enum Latest {
    @inline(__always)
    static func load() -> TraceSession? {
      guard let pointer = ctrace_latest_session() else { return nil }
      return Unmanaged<TraceSession>.fromOpaque(pointer).takeUnretainedValue()
    }
  }
  /// Serialises starting and stopping.
  static let control = AnnotatedMutex<ControlState>(ControlState())

  struct ControlState {
    var generation: UInt64 = 0
    var exitHandlerInstalled = false
    var environmentChecked = false
  }

  /// The session recording now, if it belongs to this process (not a forked parent's).
  @inline(__always)
  static func session() -> TraceSession? {
    guard let session = Current.load() else {
      return nil
    }
    return QueueTracing.isRecording ? session : nil
  }

  /// The session that traced object `id` while it can still take or count a record: the
  /// current one, or the last one while it closes (its pushes are then refused and counted).
  @inline(__always)
  static func session(owning id: UInt64) -> TraceSession? {
    guard let session = Latest.load(), id >= session.firstID,
      !session.isOver.load(ordering: .relaxed)
    else { return nil }
    return session
  }

  /// - Parameter holders: whether the session records holders; when the holder machinery
  ///   refuses this runtime (one stderr line), the session records without them.
  static func start(
    path: String, frames requested: Int,
    maxSize: UInt64? = TraceConfiguration.maxSize(from: TraceConfiguration.processEnvironment()),
    holders: Bool = false
  ) throws(DeallocTraceError) {
    // The previous session may be finished by another thread between the wait and the
    // lock, its writer still closing: then the claim finds our own lock, and waits again.
    let deadline = ctrace_monotonic_ns() &+ previousSessionWaitNanoseconds
    while true {
      waitForPreviousSessionToClose(until: deadline)
      do throws(DeallocTraceError) {
        return try startOnce(path: path, frames: requested, maxSize: maxSize, holders: holders)
      } catch .heldByThisProcess where ctrace_monotonic_ns() < deadline {
        usleep(1_000)
      }
    }
  }

  private static func startOnce(
    path: String, frames requested: Int, maxSize: UInt64?, holders: Bool
  ) throws(DeallocTraceError) {
    try control.withLock { (state: inout ControlState) throws(DeallocTraceError) in
      let pid = getpid()
      if let running = Current.load() {
        guard running.pid != pid else { throw .alreadyRecording(path: running.file.path) }
        Current.store(nil)  // a forked parent's session: not ours
      }
      let file = try LogFile.claim(path, pid: pid)
      var frames = max(0, min(requested, TraceConfiguration.maxFrames))
      if frames > 0 && cunwind_load_unwinder() == 0 {
        StandardError.write(
          DeallocTraceError.noUnwinder(reason: String(cString: cunwind_unwinder_problem()))
            .description)
        frames = 0
      }
      state.generation += 1
      let room = AddressSpaceRoom.now()
      let capacity =
        room.isTight ? TraceSession.tightBufferCapacity : TraceSession.bufferCapacity
      let session = TraceSession(
        file: file, frames: frames, pid: pid, generation: state.generation,
        firstID: ctrace_peek_next_object_id(), maxSize: maxSize,
        holders: holders && Holders.enable(), bufferCapacity: capacity)
      do throws(DeallocTraceError) {
        try file.write(
          session.headerLine(
            frames: session.frames,
            delayMilliseconds: QueueTracing.sharedQueueDelay.wholeNanoseconds / 1_000_000))
        if room.isTight {
          try file.write(room.recordLine(bufferCapacity: capacity))
          StandardError.write(room.notice(bufferCapacity: capacity))
        }
        // Never the caller's thread instead: it would never return.
        let status = LogWriter.spawn(for: session)
        if status != 0 { throw DeallocTraceError.cannotStartWriter(errno: status) }
      } catch {
        file.close()
        throw error
      }
      ctrace_install_fork_handler()
      if !state.exitHandlerInstalled {
        state.exitHandlerInstalled = true
        atexit { Tracer.finish(why: .exit) }
      }
      QueueHooks.install(QueueRecorder.hooks)
      Current.store(session)
      ctrace_set_latest_session(Unmanaged.passUnretained(session).toOpaque())
      QueueTracing.setRecording(true)
    }
  }

  /// How long `start` waits for this process's previous session to close its file: a bit
  /// longer than `finish()` waits for its writer, so that a `start` on another thread right
  /// after (or during) a `finish()` finds the file unlocked instead of mistaking our own lock
  /// for another process's. Polled, once per `start`, and only while a session is closing.
  static let previousSessionWaitNanoseconds: UInt64 = 2_500_000_000

  /// Waits (bounded) until the session started last in this process, if it is no longer
  /// the current one, has closed its file. Outside `control`: its writer takes that lock
  /// when it stops on an I/O error.
  private static func waitForPreviousSessionToClose(until deadline: UInt64) {
    guard let previous = Latest.load(), previous.pid == getpid(), Current.load() !== previous
    else { return }
    while !previous.isOver.load(ordering: .acquiring) && ctrace_monotonic_ns() < deadline {
      usleep(1_000)
    }
  }

  /// How long `finish()` waits for the writer to write `end`: bounded, so that a stuck disk
  /// never holds up the host's exit.
  static let writerWaitNanoseconds: UInt64 = 2_000_000_000
  static var writerWait: DispatchTimeInterval { .nanoseconds(Int(writerWaitNanoseconds)) }

  /// Ends the current session: `end` is written, the file closed, the writer waited for at
  /// most `writerWait`.
  static func finish(why: TraceSession.EndReason) {
    if why == .exit, let session = Current.load(), session.pid == getpid() {
      Census.recordAtExit(session)
    }
    let session = control.withLock { _ -> TraceSession? in
      guard let session = Current.load() else {
        return nil
      }
      Current.store(nil)
      QueueTracing.setRecording(false)
      return session
    }
    guard let session, session.pid == getpid() else { return }
    session.endReason.store(why.rawValue, ordering: .releasing)
    // Survivors still alive get their holders while the buffer still takes records.
    recordHoldersAtEnd(session)
    // Survivors that died since the last look get their `dealloc` before `end`, so a
    // reader doesn't call them leaked; the buffer closes in the same critical section, so
    // no other look can be half done (its `dealloc`s would be refused) or start later.
    lookLastAndClose(session)
    _ = session.writerFinished.wait(timeout: DispatchTime.now() + writerWait)
  }

  /// Stops `session` after an I/O failure: one line on stderr, tracing off, waiting
  /// producers released. The host program carries on.
  static func stop(_ session: TraceSession, failure: DeallocTraceError) {
    StandardError.write(failure.description)
    control.withLock { _ in
      if Current.load() === session {
        Current.store(nil)
        QueueTracing.setRecording(false)
      }
    }
    session.buffer.fail()
    session.file.close()
  }

  /// Starts recording when the environment asks for it. Runs its check once per process;
  /// problems are reported on stderr and leave tracing off.
  static func startFromEnvironmentOnce() {
    let configuration = control.withLock { state -> TraceConfiguration? in
      guard !state.environmentChecked else { return nil }
      state.environmentChecked = true
      return TraceConfiguration.fromEnvironment(
        TraceConfiguration.processEnvironment(), pid: getpid())
    }
    guard let configuration else { return }
    do throws(DeallocTraceError) {
      if let directory = configuration.directoryToCreate {
        try TraceConfiguration.makeDirectory(directory)
      }
      try start(
        path: configuration.path, frames: configuration.frames, maxSize: configuration.maxSize,
        holders: configuration.holders)
    } catch {
      if case .alreadyRecording = error { return }
      StandardError.write(error.description)
    }
  }

  /// Looks at every survivor and writes `dealloc` for those that died. Runs on the thread
  /// that recorded a drain or a mark, or on a dispatch worker for the timer, never on the
  /// writer.
  ///
  /// The look runs under the survivor list's lock, so looks never overlap: one that took
  /// the list out could otherwise hide it from `finish()`'s last look, and its `dealloc`s
  /// would arrive after the buffer closed. No `deinit` runs under that lock (a `deinit` may
  /// enqueue, mark or check, and so take it): each weak reference is loaded into a strong
  /// one that is kept until the lock is released, so the lock never drops the last
  /// reference to anything. Pushing under the lock may wait for room, which only the
  /// writer makes, and the writer never takes this lock.
  static func checkSurvivors(_ session: TraceSession) {
    guard session.survivorCount.load(ordering: .relaxed) > 0 else { return }
    let held = session.survivors.withLock { list in look(at: &list, in: session) }
    letGo(held, in: session)
  }

  /// `finish()`'s last look, and the buffer's close in the same critical section: no other
  /// look can be half done, or start afterwards and record what died after the session.
  ///
  /// A look that has just released the lock may still hold strong references (it lets
  /// them go right after); an object kept alive only by those would look alive here and be
  /// called leaked, so the last look waits for such looks to finish (bounded, like the
  /// wait for releases under way).
  static func lookLastAndClose(_ session: TraceSession) {
    let deadline = ctrace_monotonic_ns() &+ TraceSession.releaseWaitNanoseconds
    while true {
      let held = session.survivors.withLock { list -> HiddenReferences? in
        let busy = session.survivorLooksLettingGo.load(ordering: .sequentiallyConsistent) > 0
        guard !busy || ctrace_monotonic_ns() >= deadline else { return nil }
        let held = look(at: &list, in: session)
        session.buffer.close()
        return held
      }
      if let held {
        letGo(held, in: session)
        return
      }
      usleep(1_000)
    }
  }

  /// One look, with the list's lock held. Returns the strong references it took, for
  /// `letGo` after the lock.
  private static func look(
    at list: inout [Survivor], in session: TraceSession
  ) -> HiddenReferences {
    var held = HiddenReferences()
    // A look after the buffer closed would see deaths that happened after the session's
    // last look; they are not the session's to record.
    guard !list.isEmpty, session.buffer.isOpen else { return held }
    var stillAlive: [Survivor] = []
    for survivor in list {
      if let object = survivor.object {
        held.retain(object)
        stillAlive.append(survivor)
        continue
      }
      session.buffer.push(TraceEvent(time: session.now(), .dealloc(objectID: survivor.id)))
    }
    session.survivorCount.subtract(list.count - stillAlive.count, ordering: .relaxed)
    list = stillAlive
    if !held.isEmpty {
      session.survivorLooksLettingGo.add(1, ordering: .sequentiallyConsistent)
    }
    return held
  }

  /// Drops a look's strong references, outside the lock: this may run `deinit`s.
  ///
  /// With holders on, the look's weak loads left survivors' addresses in this thread's
  /// dead stack, which a scan from another thread would read as holders: they are cleared
  /// before the look counts as over (scans wait for looks letting go, see
  /// `withSurvivorsQuiet`). Never inlined, so that the look's frames are below this one.
  @inline(never)
  private static func letGo(_ held: consuming HiddenReferences, in session: TraceSession) {
    let counted = !held.isEmpty
    held.releaseAll()
    if session.holderBudget != nil {
      ctrace_scrub_dead_stack()
    }
    if counted {
      session.survivorLooksLettingGo.subtract(1, ordering: .sequentiallyConsistent)
    }
  }

  /// The id of a survivor at `hiddenAddress` (`HiddenAddress`) that is still alive, for
  /// `check` records.
  static func survivorID(at hiddenAddress: UInt, in session: TraceSession) -> UInt64? {
    checkSurvivors(session)
    return session.survivors.withLock { list in
      // Address only: loading the weak reference here could run a deinit under the lock.
      list.first { $0.hiddenAddress == hiddenAddress }?.id
    }
  }
}
