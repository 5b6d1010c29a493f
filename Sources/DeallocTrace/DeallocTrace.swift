import CTraceRuntime
import Glibc

/// The recorder: a JSON-lines log of what every `DeallocQueue` does, with backtraces.
///
/// Setting `DEALLOCTRACE_LOG=PATH` (or `DEALLOCTRACE=1`) turns it on in any process that
/// creates a queue, with no code change; this API is for programs and tests that want to
/// choose the moment or add checkpoints. The log follows `docs/log-format.md` (v1).
///
/// The trade-off: recording costs the enqueuing thread one stack walk (`cunwind_backtrace`:
/// cached call-frame rules, a few nanoseconds a frame) and a copy into a buffer; names, symbols and I/O happen on a writer thread. No
/// record is dropped: when the writer falls behind, recording threads wait for it.
public enum DeallocTrace {
  /// The default backtrace depth (`DEALLOCTRACE_FRAMES` overrides it; 0 turns stacks off).
  public static let defaultFrames = TraceConfiguration.defaultFrames

  /// The longest `start` waits for a session of this process that another thread is
  /// finishing to close its file.
  public static var previousSessionWait: Duration {
    .nanoseconds(Int64(Tracer.previousSessionWaitNanoseconds))
  }

  /// The longest `finish()` waits for releases whose `deinit` is still running.
  public static var releaseWait: Duration {
    .nanoseconds(Int64(TraceSession.releaseWaitNanoseconds))
  }

  /// The longest `finish()` waits in all for the writer to write `end` and close the log.
  public static var writerWait: Duration {
    .nanoseconds(Int64(Tracer.writerWaitNanoseconds))
  }

  /// Whether a session is recording in this process now.
  public static var isEnabled: Bool {
    Tracer.startFromEnvironmentOnce()
    return Tracer.session() != nil
  }

  /// Where the current session writes, or nil when not recording. It can differ from the
  /// path asked for when another process holds that file (then it is `NAME.<pid>.jsonl`
  /// beside it, see `docs/log-format.md`).
  public static var logPath: String? {
    Tracer.session()?.file.path
  }

  /// Starts a session writing to `path` (appended to; `%p` is not expanded here).
  ///
  /// - Parameters:
  ///   - path: the log file, created with mode 0600 if missing. An existing regular file
  ///     must be a log of this user (owned by it, writable by no one else, empty or starting
  ///     with a `session` record); any other is refused, never appended to or chmodded. A
  ///     character device or a FIFO is written as it is (see `docs/log-format.md`). The
  ///     file's size is capped by `DEALLOCTRACE_MAX_SIZE` (default 1 GiB), read here too.
  ///   - frames: the backtrace depth for enqueues; 0 records no stacks. Nil (the default)
  ///     takes `DEALLOCTRACE_FRAMES` from the environment, as the environment switch does,
  ///     so that a depth set for a whole run also reaches programs that start tracing from
  ///     code; without it, `defaultFrames`. A value there that is not a number ≥ 0 is
  ///     reported on stderr and the default is used.
  /// - Throws: `DeallocTraceError` when the file cannot be opened or written, is not this
  ///   user's log, or a session is already recording. Tracing then stays as it was. A
  ///   session of this process that another thread is finishing is waited for (at most
  ///   ``previousSessionWait``), so cycles of `start` and `finish` on several threads reuse
  ///   `path`.
  ///
  /// Holders are recorded when `DEALLOCTRACE_HOLDERS=1` is set, as with the environment
  /// switch, or when `enableHolders()` turned them on; `start(path:frames:holders:)` chooses
  /// from code.
  public static func start(path: String, frames: Int? = nil) throws(DeallocTraceError) {
    let environment = TraceConfiguration.processEnvironment()
    let holders = TraceConfiguration.holders(from: environment) || Holders.isOn
    try start(path: path, frames: frames, holders: holders)
  }

  /// Starts a session as `start(path:frames:)` does, and says whether it records who
  /// still holds each survivor (`holders` records, `docs/log-format.md`).
  ///
  /// - Parameter holders: true turns the holder machinery on first (`enableHolders()`).
  ///   Started from code, it knows only objects allocated after that moment; set
  ///   `DEALLOCTRACE_HOLDERS=1` in the environment to cover the whole process from its
  ///   start. When this runtime cannot be hooked safely, one line on stderr says so and the
  ///   session records without holders.
  public static func start(
    path: String, frames: Int? = nil, holders: Bool
  ) throws(DeallocTraceError) {
    Tracer.control.withLock { $0.environmentChecked = true }
    let depth =
      frames ?? TraceConfiguration.frames(from: TraceConfiguration.processEnvironment())
    try Tracer.start(path: path, frames: depth, holders: holders)
  }

  /// Ends the current session: writes `end` with the `pending` and `lost` counts, flushes
  /// and closes the log. Safe to call when not recording. A later `start` begins a new
  /// session. It waits (at most ``releaseWait``) for releases whose `deinit` is still
  /// running, so that their records are counted, and for the writer at most ``writerWait``
  /// in all.
  public static func finish() {
    Tracer.finish(why: .explicit)
  }

  /// Waits until everything recorded so far is in the file (not necessarily on disk: the
  /// kernel has it, so it survives the process being killed). For tests and benchmarks that
  /// look at the log while the process runs; recording itself never needs it.
  public static func flush() {
    Tracer.session()?.buffer.waitUntilWritten()
  }

  /// Records a checkpoint, and looks at the survivors (a mark is a moment a test cares
  /// about, so deaths up to here get their `dealloc`).
  public static func mark(_ label: String) {
    guard let session = Tracer.session() else { return }
    session.announceCurrentThread()
    session.buffer.push(
      TraceEvent(time: session.now(), threadID: ctrace_thread_id(), .mark(label: label)))
    Tracer.checkSurvivors(session)
    if session.holderBudget != nil {
      // A mark follows work the program finished (a screen closed): the addresses that
      // work left in this thread's dead stack would read as holders to a scan from a drain.
      ctrace_scrub_dead_stack()
    }
  }

  /// Records what a leak assertion saw about `object` (a `check` record).
  ///
  /// - Parameters:
  ///   - object: the object looked at.
  ///   - alive: whether the assertion found it alive.
  ///   - label: the assertion's name, typically the test's.
  ///   - id: the tracer's id for the object when the caller knows it (for an object still
  ///     in a queue, `DeallocQueue.traceID(of:)`). When nil, the tracer fills it in if the
  ///     object is a survivor it watches; otherwise the record has no `id` and readers
  ///     match it by address.
  public static func recordCheck(_ object: AnyObject, alive: Bool, label: String, id: UInt64? = nil)
  {
    guard let session = Tracer.session() else { return }
    let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
    let metatype = unsafeBitCast(type(of: object), to: UnsafeRawPointer.self)
    let objectID = record(
      address: address, type: .metatype(metatype), alive: alive, label: label, id: id,
      in: session)
    if alive {
      Tracer.recordHoldersAtCheck(
        address: address, metatype: metatype, typeName: "", id: objectID, in: session)
    }
  }

  /// Records a check on an object that may be gone: by address and type name, for an
  /// assertion that held only a weak reference.
  ///
  /// With holders on, an object seen `alive` and in no queue also gets its holders
  /// (`why: "check"`): the scanner re-validates the address as a live Swift object, so a
  /// check that raced the object's death records none.
  public static func recordCheck(
    address: UInt, typeName: String, alive: Bool, label: String, id: UInt64? = nil
  ) {
    guard let session = Tracer.session() else { return }
    let objectID = record(
      address: address, type: .name(typeName), alive: alive, label: label, id: id, in: session)
    if alive {
      Tracer.recordHoldersAtCheck(
        address: address, metatype: nil, typeName: typeName, id: objectID, in: session)
    }
  }

  /// Pushes the `check` record; returns the object's id as recorded (0: unknown).
  private static func record(
    address: UInt, type: TraceEvent.RecordedType, alive: Bool, label: String, id: UInt64?,
    in session: TraceSession
  ) -> UInt64 {
    session.announceCurrentThread()
    let hiddenAddress = HiddenAddress.hide(address)
    let check = TraceEvent.Check(
      objectID: id ?? Tracer.survivorID(at: hiddenAddress, in: session) ?? 0,
      hiddenAddress: hiddenAddress, type: type, alive: alive, label: label)
    session.buffer.push(
      TraceEvent(time: session.now(), threadID: ctrace_thread_id(), .check(check)))
    return check.objectID
  }
}
