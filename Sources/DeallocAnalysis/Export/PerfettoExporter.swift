import DeallocLog

/// Streams logs into Chrome trace-event JSON, the format ui.perfetto.dev and chrome://tracing
/// open: one async slice per object from enqueue to release, a depth counter per queue,
/// instants for marks, drains, checks and late deallocs, and process and thread names.
///
/// Why a streaming visitor and not a ``ReportRenderer``: a trace has an event per record, so
/// it cannot come from the bounded ``Report``. The exporter writes each event as its record
/// arrives and keeps only the objects still in a queue (their slice must be closed) and the
/// survivors of their release (a late dealloc is named by type), so its memory follows what is
/// pending, not the log's size.
///
/// Choices a reader of the trace should know:
/// - Each session is its own process (`pid` = the session's number, counted across inputs);
///   its name carries the real program and pid. Every session starts at `ts` 0.
/// - A slice's `id` is a counter over the whole export, never the object's address (addresses
///   are reused) nor the log's `id` (which restarts in every session); both are in its args.
/// - An object never released ends at its session's last record, with `unreleased: true` and
///   its state (`pending`, `stuck` or `neverReleased`) in the closing event's args.
/// - A counter sample never goes back in time: a record written out of order by another thread
///   is drawn at the queue's previous sample time.
/// - A check's verdict, a release's survivor, a late dealloc and a leaked or unreleased
///   object's state come from the life cycle's transitions, as the report's do
///   (`Lifecycle/ObjectLifecycle+Transitions.swift`). The instant of a
///   check of an object still in its queue is written once the object's release is read (or
///   at its session's end), because a release written after the check can still be timed
///   before it.
/// - Checks and late deallocs carry no thread in the log; they go to a thread named
///   `dealloctrace` of their session, with tid 2,000,000,000: above any Linux thread id
///   (`pid_max` is at most 2²²), and not 0, which trace viewers keep for the idle thread.
public struct PerfettoExporter<Output: TraceOutput>: LogVisitor {
  /// What was written, for the command's one-line summary and for tests.
  public struct Counts: Sendable, Equatable {
    public var sessions = 0
    public var slices = 0
    public var unreleasedSlices = 0
    public var counterSamples = 0
    public var instants = 0
  }

  public private(set) var output: Output
  /// An unreleased object older than this, in a session without `end`, is flagged `stuck`.
  public var stuckAfter: Int64
  public private(set) var counts = Counts()
  /// Problems in the input (kept up to 200; the rest counted in ``omittedWarnings``).
  public var warnings: [LogWarning] { capped.kept }
  public var omittedWarnings: Int { capped.omitted }
  private var capped = CappedWarnings(limit: 200)
  /// The most objects held at once (in a queue, or released but alive): what memory follows.
  package private(set) var peakTrackedObjects = 0

  private var writer = TraceEventWriter(capacity: PerfettoExporter.flushThreshold + 4096)
  private var nextSliceID: UInt64 = 0
  private var session: ExportSession?
  private static var flushThreshold: Int { 1 << 20 }
  private static var syntheticThread: Int64 { 2_000_000_000 }

  public init(output: Output, stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) {
    self.output = output
    self.stuckAfter = stuckAfter
    writer.raw("{\"traceEvents\":[\n")
  }

  public mutating func warn(_ warning: LogWarning) {
    capped.add(warning)
  }

  public mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info):
      begin(info)
    case .record(let record):
      guard session != nil else { return }
      apply(record, at: location)
    case .sessionEnded(let ending):
      guard session != nil else { return }
      end(ending)
      session = nil
    }
    if writer.bytes.count >= Self.flushThreshold { try flush() }
  }

  /// Writes the end of the document and finishes the output. Call once, after reading.
  public mutating func finish() throws(AnalysisError) {
    writer.endEvents()
    writer.string("displayTimeUnit", literal: "ms")
    writer.beginObject("otherData")
    writer.string("generator", "dealloctrace \(DeallocAnalysis.toolVersion)")
    writer.int("sessions", Int64(counts.sessions))
    writer.endObject()
    writer.raw("}\n")
    try flush()
    try output.finish()
  }

  private mutating func flush() throws(AnalysisError) {
    guard !writer.bytes.isEmpty else { return }
    try writer.drain { bytes throws(AnalysisError) in try output.write(bytes) }
  }

  // MARK: - Events

  /// Starts an event of `phase` with the fields every event has.
  private mutating func event(_ phase: Unicode.Scalar, tid: Int64?) {
    writer.begin(UInt8(ascii: phase))
    writer.int("pid", session!.pid)
    writer.int("tid", tid ?? Self.syntheticThread)
  }

  /// Starts a thread-scoped instant event named `prefix` + `name`, with its `args` open.
  private mutating func instant(
    _ prefix: StaticString, _ name: String, cat: StaticString, at t: Int64, tid: Int64?
  ) {
    event("i", tid: tid)
    writer.string("name", prefix: prefix, name)
    writer.string("cat", literal: cat)
    writer.string("s", literal: "t")
    writer.microseconds("ts", t)
    writer.beginArgs()
    counts.instants += 1
  }

  private mutating func metadata(_ kind: String, tid: Int64, _ key: StaticString, _ value: String) {
    event("M", tid: tid)
    writer.string("name", kind)
    writer.beginArgs()
    writer.string(key, value)
    writer.endArgs()
    writer.end()
  }

  private mutating func begin(_ info: SessionInfo) {
    let pid = Int64(info.index + 1)
    session = ExportSession(info: info, pid: pid)
    counts.sessions += 1
    var name =
      info.record.executable.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
      ?? "session"
    if let realPid = info.record.pid { name += " (pid \(realPid))" }
    name += " · session \(info.index + 1)"
    metadata("process_name", tid: Self.syntheticThread, "name", name)
    event("M", tid: Self.syntheticThread)
    writer.string("name", "process_sort_index")
    writer.beginArgs()
    writer.int("sort_index", pid)
    writer.endArgs()
    writer.end()
    metadata("thread_name", tid: Self.syntheticThread, "name", "dealloctrace")
  }

  private mutating func apply(_ record: LogRecord, at location: LogLocation) {
    switch record {
    case .thread(let thread):
      metadata("thread_name", tid: thread.tid, "name", thread.name)
    case .enqueue(let r):
      enqueue(r, at: location)
    case .release(let r):
      release(r, at: location)
    case .dealloc(let r):
      dealloc(r, at: location)
    case .drain(let r):
      instant("drain ", r.queue, cat: "drain", at: r.time, tid: r.tid)
      writer.string("queue", r.queue)
      writer.int("n", Int64(r.count))
      if let why = r.reason { writer.string("why", why) }
      writer.endArgs()
      writer.end()
    case .mark(let r):
      instant("", r.label, cat: "mark", at: r.time, tid: r.tid)
      writer.string("label", r.label)
      writer.endArgs()
      writer.end()
    case .check(let r):
      check(r)
    case .session, .stack, .end, .cut, .holders, .census, .unknown:
      break
    }
    let tracked = session!.live.count + session!.survivors.count
    if tracked > peakTrackedObjects { peakTrackedObjects = tracked }
  }

  private mutating func enqueue(_ r: EnqueueRecord, at location: LogLocation) {
    if session!.live[r.id] != nil || session!.survivors[r.id] != nil {
      warn(
        LogWarning(
          .inconsistentRecord, at: location,
          "enqueue reuses id \(r.id), which is still in use; the record is skipped"))
      return
    }
    nextSliceID += 1
    let slice = ExportSession.Live(
      sliceID: nextSliceID, type: r.type, queue: r.queue, enqueuedAt: r.time, address: r.object)
    session!.live[r.id] = slice
    session!.liveByAddress[r.object] = r.id
    counts.slices += 1
    event("b", tid: r.tid)
    writer.string("cat", literal: "object")
    writer.string("name", r.type)
    writer.int("id", Int64(nextSliceID))
    writer.microseconds("ts", r.time)
    writer.beginArgs()
    writer.int("id", Int64(r.id))
    writer.address("obj", r.object)
    writer.string("queue", r.queue)
    if let rc = r.retainCount { writer.int("rc", Int64(rc)) }
    writer.endArgs()
    writer.end()
    let depth = r.depth ?? ((session!.queues[r.queue]?.depth ?? 0) + 1)
    sample(queue: r.queue, depth: depth, at: r.time, tid: r.tid)
  }

  private mutating func release(_ r: ReleaseRecord, at location: LogLocation) {
    guard let slice = session!.live.removeValue(forKey: r.id) else {
      warn(
        LogWarning(
          .inconsistentRecord, at: location,
          "release of id \(r.id), which is not in a queue; the record is skipped"))
      return
    }
    if session!.liveByAddress[slice.address] == r.id {
      session!.liveByAddress[slice.address] = nil
    }
    session!.lastTime = max(session!.lastTime, r.time)
    session!.released.add(
      r.id,
      RecentReleases.Entry(
        address: slice.address, enqueuedAt: slice.enqueuedAt, releasedAt: r.time,
        value: ExportSession.Released(freed: r.freed)),
      now: session!.lastTime)
    if let deferred = session!.deferredChecks.removeValue(forKey: r.id) {
      var lifecycle = ObjectLifecycle(enqueuedAt: slice.enqueuedAt)
      lifecycle.recordRelease(at: r.time, freed: r.freed, retainCount: r.retainCount)
      for check in deferred { writeCheck(check, verdict: lifecycle.verdict(ofCheckAt: check.time)) }
    }
    event("e", tid: r.tid)
    writer.string("cat", literal: "object")
    writer.string("name", slice.type)
    writer.int("id", Int64(slice.sliceID))
    writer.microseconds("ts", max(r.time, slice.enqueuedAt))
    writer.beginArgs()
    writer.bool("freed", r.freed)
    if let rc = r.retainCount { writer.int("rc", Int64(rc)) }
    writer.endArgs()
    writer.end()
    sample(
      queue: slice.queue, depth: max(0, (session!.queues[slice.queue]?.depth ?? 1) - 1), at: r.time,
      tid: r.tid)
    if ObjectLifecycle.release(freed: r.freed) == .survivor {
      session!.survivors.insert(r.id, ExportSession.Survivor(live: slice, releasedAt: r.time))
    }
  }

  private mutating func dealloc(_ r: DeallocRecord, at location: LogLocation) {
    guard let survivor = session!.survivors.remove(r.id) else {
      warn(
        LogWarning(
          .inconsistentRecord, at: location,
          "dealloc of id \(r.id), which did not survive a release; skipped"))
      return
    }
    afterRelease(ObjectLifecycle.stateAfterDealloc, of: survivor.live.type, at: r.time)
    writer.int("id", Int64(r.id))
    writer.address("obj", survivor.live.address)
    writer.string("type", survivor.live.type)
    writer.microseconds("after_release_us", r.time - survivor.releasedAt)
    writer.endArgs()
    writer.end()
  }

  /// The same lookup and rule as the analyzer (``SessionObjects/object(checkedBy:)``,
  /// ``QueueMembership``). A check of an object still in its queue waits for the release.
  private mutating func check(_ r: CheckRecord) {
    session!.lastTime = max(session!.lastTime, r.time)
    guard r.alive else {
      writeCheck(r, verdict: nil)
      return
    }
    let object = session!.object(checkedBy: r)
    if let object, object.isQueued, object.enqueuedAt <= r.time {
      var deferred = session!.deferredChecks.removeValue(forKey: object.id) ?? []
      if deferred.count < Self.deferredChecksPerObject {
        deferred.append(r)
        session!.deferredChecks[object.id] = deferred
        return
      }
      session!.deferredChecks[object.id] = deferred
      // Too many checks of one object wait already: this one is judged now, as queued.
    }
    writeCheck(r, verdict: ObjectLifecycle.verdict(ofCheckAt: r.time, of: object?.lifecycle))
  }

  /// Checks of one queued object whose instants wait for its release; beyond, they are
  /// written at once as false leaks.
  private static var deferredChecksPerObject: Int { 64 }

  private mutating func writeCheck(_ r: CheckRecord, verdict: CheckVerdict.Verdict?) {
    switch verdict {
    case .falseLeak?: instant("false leak: ", r.type, cat: "check", at: r.time, tid: nil)
    case .trueLeak?: instant("true leak: ", r.type, cat: "check", at: r.time, tid: nil)
    case nil: instant("check passed: ", r.type, cat: "check", at: r.time, tid: nil)
    }
    writer.string("label", r.label)
    writer.string("type", r.type)
    writer.address("obj", r.object)
    writer.bool("alive", r.alive)
    if let verdict { writer.string("verdict", verdict.rawValue) }
    if let id = r.id { writer.int("id", Int64(id)) }
    writer.endArgs()
    writer.end()
  }

  /// Starts the instant of a survivor of its release reaching `state` (late at its dealloc,
  /// leaked at the session's end), with its `args` open: named by the state the life cycle
  /// gave, never decided here.
  private mutating func afterRelease(_ state: ObjectState, of type: String, at t: Int64) {
    switch state {
    case .late: instant("late dealloc: ", type, cat: "dealloc", at: t, tid: nil)
    case .leaked: instant("leaked: ", type, cat: "leak", at: t, tid: nil)
    case .freed, .pending, .stuck, .neverReleased:
      preconditionFailure("a survivor of its release cannot end \(state.rawValue)")
    }
  }

  private mutating func sample(queue: String, depth: Int, at t: Int64, tid: Int64?) {
    var counter = session!.queues[queue] ?? ExportSession.Counter()
    let time = max(t, counter.lastTime)
    counter.depth = depth
    counter.lastTime = time
    session!.queues[queue] = counter
    counts.counterSamples += 1
    event("C", tid: tid)
    writer.string("name", prefix: "queue ", queue)
    writer.microseconds("ts", time)
    writer.beginArgs()
    writer.int("depth", Int64(depth))
    writer.endArgs()
    writer.end()
  }

  private mutating func end(_ ending: SessionEnding) {
    let last = ending.lastTime
    let sessionEnd = EndOfSession(ending, stuckAfter: stuckAfter)
    // Checks of objects never released: they were in their queue.
    let deferred = session!.deferredChecks.sorted {
      (session!.live[$0.key]?.sliceID ?? 0) < (session!.live[$1.key]?.sliceID ?? 0)
    }
    for (id, checks) in deferred {
      let lifecycle = session!.live[id].map { ObjectLifecycle(enqueuedAt: $0.enqueuedAt) }
      for check in checks {
        writeCheck(check, verdict: ObjectLifecycle.verdict(ofCheckAt: check.time, of: lifecycle))
      }
    }
    for (id, slice) in session!.live.sorted(by: { $0.value.sliceID < $1.value.sliceID }) {
      let state = sessionEnd.state(ofOpenObjectEnqueuedAt: slice.enqueuedAt, released: false)
      counts.unreleasedSlices += 1
      event("e", tid: nil)
      writer.string("cat", literal: "object")
      writer.string("name", slice.type)
      writer.int("id", Int64(slice.sliceID))
      writer.microseconds("ts", max(last, slice.enqueuedAt))
      writer.beginArgs()
      writer.bool("unreleased", true)
      writer.string("state", state.rawValue)
      writer.int("log_id", Int64(id))
      writer.endArgs()
      writer.end()
    }
    let survivors = session!.survivors.entries.sorted {
      $0.survivor.live.sliceID < $1.survivor.live.sliceID
    }
    for (id, survivor) in survivors {
      let state = sessionEnd.state(ofOpenObjectEnqueuedAt: survivor.enqueuedAt, released: true)
      afterRelease(state, of: survivor.live.type, at: last)
      writer.int("id", Int64(id))
      writer.address("obj", survivor.live.address)
      writer.microseconds("released_at_us", survivor.releasedAt)
      writer.endArgs()
      writer.end()
    }
  }
}

/// What the exporter keeps while one session is read.
private struct ExportSession {
  struct Live: QueuedObject {
    var sliceID: UInt64
    var type: String
    var queue: String
    var enqueuedAt: Int64
    var address: Address
  }

  struct Survivor: SurvivingObject {
    var live: Live
    var releasedAt: Int64

    var address: Address { live.address }
    var enqueuedAt: Int64 { live.enqueuedAt }
  }

  /// Whether a recent release freed its object.
  struct Released: ReleasedObject {
    var freed: Bool
  }

  struct Counter {
    var depth = 0
    var lastTime: Int64 = .min
  }

  let info: SessionInfo
  let pid: Int64
  var live: [UInt64: Live] = [:]
  var liveByAddress: [Address: UInt64] = [:]
  var survivors = Survivors<Survivor>()
  var queues: [String: Counter] = [:]
  /// Released objects, for checks written after a release they precede.
  var released = RecentReleases<Released>()
  /// Alive checks of objects still in their queue, by object id, waiting for the release.
  var deferredChecks: [UInt64: [CheckRecord]] = [:]
  /// The largest `t` read so far.
  var lastTime: Int64 = 0

  init(info: SessionInfo, pid: Int64) {
    self.info = info
    self.pid = pid
  }
}

extension ExportSession: SessionObjects {
  func queued(_ id: UInt64) -> Live? { live[id] }

  func latestQueuedID(at address: Address) -> UInt64? { liveByAddress[address] }
}
