import CUnwind
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
  /// Kept in a C global (`cunwind_current_session`) so the hot path pays no `swift_once`.
  enum Current {
    static func load() -> TraceSession? {
      guard let pointer = cunwind_current_session() else { return nil }
      return Unmanaged<TraceSession>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Publishes `session`, retaining it forever; nil unpublishes.
    static func store(_ session: TraceSession?) {
      cunwind_set_current_session(session.map { Unmanaged.passRetained($0).toOpaque() })
    }
  }
  /// Serialises starting and stopping.
  static let control = AnnotatedMutex<ControlState>(ControlState())

  struct ControlState {
    var generation: UInt64 = 0
    var exitHandlerInstalled = false
    var environmentChecked = false
  }

  /// The drain delay of `DeallocQueue.shared`, which the `session` record states.
  static let sharedQueueDelayMilliseconds = 100

  /// The session recording now, if it belongs to this process (not a forked parent's).
  @inline(__always)
  static func session() -> TraceSession? {
    guard let session = Current.load() else {
      return nil
    }
    return cunwind_tracing_is_on() != 0 ? session : nil
  }

  static func start(path: String, frames: Int) throws(DeallocTraceError) {
    try control.withLock { (state: inout ControlState) throws(DeallocTraceError) in
      let pid = getpid()
      if let running = Current.load() {
        guard running.pid != pid else { throw .alreadyRecording(path: running.file.path) }
        Current.store(nil)  // a forked parent's session: not ours
      }
      let file = try LogFile.claim(path, pid: pid)
      state.generation += 1
      let session = TraceSession(
        file: file, frames: max(0, min(frames, TraceConfiguration.maxFrames)), pid: pid,
        generation: state.generation,
        firstID: cunwind_peek_next_object_id())
      do throws(DeallocTraceError) {
        try file.write(
          session.headerLine(
            frames: session.frames, delayMilliseconds: sharedQueueDelayMilliseconds))
      } catch {
        file.close()
        throw error
      }
      LogWriter.spawn(for: session)
      cunwind_install_fork_handler()
      if !state.exitHandlerInstalled {
        state.exitHandlerInstalled = true
        atexit { Tracer.finish(why: .exit) }
      }
      Current.store(session)
      cunwind_set_tracing(1)
    }
  }

  /// Ends the current session: `end` is written, the file closed. Waits for the writer at
  /// most two seconds, so that a stuck disk never holds up the host's exit.
  static func finish(why: TraceSession.EndReason) {
    let session = control.withLock { _ -> TraceSession? in
      guard let session = Current.load() else {
        return nil
      }
      Current.store(nil)
      cunwind_set_tracing(0)
      return session
    }
    guard let session, session.pid == getpid() else { return }
    // Survivors that died since the last look get their `dealloc` before `end`, so a
    // reader doesn't call them leaked.
    checkSurvivors(session)
    session.endReason.store(why.rawValue, ordering: .releasing)
    session.buffer.close()
    _ = session.writerFinished.wait(timeout: DispatchTime.now() + DispatchTimeInterval.seconds(2))
  }

  /// Stops `session` after an I/O failure: one line on stderr, tracing off, waiting
  /// producers released. The host program carries on.
  static func stop(_ session: TraceSession, failure: DeallocTraceError) {
    StandardError.write(failure.description)
    control.withLock { _ in
      if Current.load() === session {
        Current.store(nil)
        cunwind_set_tracing(0)
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
      try start(path: configuration.path, frames: configuration.frames)
    } catch {
      if case .alreadyRecording = error { return }
      StandardError.write(error.description)
    }
  }

  /// Looks at every survivor and writes `dealloc` for those that died. Runs on the thread
  /// that recorded a drain or a mark, or on a dispatch worker for the timer, never on the
  /// writer. The list is taken out under the lock and checked outside it, because loading
  /// a weak reference may release the object last and run its `deinit`, which may record.
  static func checkSurvivors(_ session: TraceSession) {
    guard session.survivorCount.load(ordering: .relaxed) > 0 else { return }
    let watched = session.survivors.withLock { list -> [Survivor] in
      var taken: [Survivor] = []
      swap(&taken, &list)
      return taken
    }
    var stillAlive: [Survivor] = []
    for survivor in watched {
      if survivor.object != nil {
        stillAlive.append(survivor)
        continue
      }
      var event = TraceEvent(kind: .dealloc)
      event.time = session.now()
      event.objectID = survivor.id
      session.buffer.push(event)
    }
    let died = watched.count - stillAlive.count
    session.survivors.withLock { $0.append(contentsOf: stillAlive) }
    session.survivorCount.subtract(died, ordering: .relaxed)
  }

  /// The id of a survivor at `address` that is still alive, for `check` records.
  static func survivorID(at address: UInt, in session: TraceSession) -> UInt64? {
    checkSurvivors(session)
    return session.survivors.withLock { list in
      // Address only: loading the weak reference here could run a deinit under the lock.
      list.first { $0.address == address }?.id
    }
  }
}
