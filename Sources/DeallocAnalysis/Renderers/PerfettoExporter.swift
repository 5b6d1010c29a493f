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
/// - Checks and late deallocs carry no thread in the log; they go to a thread named
///   `dealloctrace` (tid 0) of their session.
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
  public private(set) var warnings: [LogWarning] = []
  public private(set) var omittedWarnings = 0
  /// The most objects held at once (in a queue, or released but alive): what memory follows.
  package private(set) var peakTrackedObjects = 0

  private var buffer = ""
  private var wroteEvent = false
  private var nextSliceID: UInt64 = 0
  private var session: ExportSession?
  private static var flushThreshold: Int { 1 << 20 }
  private static var syntheticThread: Int64 { 0 }

  public init(output: Output, stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) {
    self.output = output
    self.stuckAfter = stuckAfter
    buffer = "{\"traceEvents\":[\n"
  }

  public mutating func warn(_ warning: LogWarning) {
    if warnings.count < 200 {
      warnings.append(warning)
    } else {
      omittedWarnings += 1
    }
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
    if buffer.utf8.count >= Self.flushThreshold { try flush() }
  }

  /// Writes the end of the document and finishes the output. Call once, after reading.
  public mutating func finish() throws(AnalysisError) {
    buffer += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":"
    JSONValue.quote("dealloctrace \(DeallocAnalysis.toolVersion)", into: &buffer)
    buffer += ",\"sessions\":\(counts.sessions)}}\n"
    try flush()
    try output.finish()
  }

  private mutating func flush() throws(AnalysisError) {
    guard !buffer.isEmpty else { return }
    try output.write(buffer)
    buffer = ""
  }

  // MARK: - Events

  private mutating func emit(
    _ phase: String, _ fields: [(String, TraceEventEncoding.Value)],
    args: [(String, TraceEventEncoding.Value?)] = []
  ) {
    if wroteEvent { buffer += ",\n" }
    wroteEvent = true
    TraceEventEncoding.append(phase, fields, args: args, into: &buffer)
  }

  private func ts(_ t: Int64) -> TraceEventEncoding.Value {
    .raw(TraceEventEncoding.microseconds(t))
  }

  private mutating func begin(_ info: SessionInfo) {
    let pid = Int64(info.index + 1)
    session = ExportSession(info: info, pid: pid)
    counts.sessions += 1
    var name =
      info.record.exe.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
      ?? "session"
    if let realPid = info.record.pid { name += " (pid \(realPid))" }
    name += " · session \(info.index + 1)"
    emit(
      "M", [("name", .string("process_name")), ("pid", .int(pid)), ("tid", .int(0))],
      args: [("name", .string(name))])
    emit(
      "M", [("name", .string("process_sort_index")), ("pid", .int(pid)), ("tid", .int(0))],
      args: [("sort_index", .int(pid))])
    emit(
      "M",
      [("name", .string("thread_name")), ("pid", .int(pid)), ("tid", .int(Self.syntheticThread))],
      args: [("name", .string("dealloctrace"))])
  }

  private mutating func apply(_ record: LogRecord, at location: LogLocation) {
    let pid = session!.pid
    switch record {
    case .thread(let thread):
      emit(
        "M", [("name", .string("thread_name")), ("pid", .int(pid)), ("tid", .int(thread.tid))],
        args: [("name", .string(thread.name))])
    case .enqueue(let r):
      enqueue(r, at: location)
    case .release(let r):
      release(r, at: location)
    case .dealloc(let r):
      dealloc(r, at: location)
    case .drain(let r):
      counts.instants += 1
      emit(
        "i",
        [
          ("name", .string("drain " + r.q)), ("cat", .string("drain")), ("s", .string("t")),
          ("ts", ts(r.t)), ("pid", .int(pid)), ("tid", .int(r.tid ?? Self.syntheticThread)),
        ],
        args: [
          ("queue", .string(r.q)), ("n", .int(Int64(r.n))), ("why", r.why.map { .string($0) }),
        ])
    case .mark(let r):
      counts.instants += 1
      emit(
        "i",
        [
          ("name", .string(r.label)), ("cat", .string("mark")), ("s", .string("t")),
          ("ts", ts(r.t)), ("pid", .int(pid)), ("tid", .int(r.tid ?? Self.syntheticThread)),
        ],
        args: [("label", .string(r.label))])
    case .check(let r):
      check(r)
    case .session, .stack, .end, .unknown:
      break
    }
    let tracked = session!.live.count + session!.survivors.count
    peakTrackedObjects = max(peakTrackedObjects, tracked)
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
      sliceID: nextSliceID, type: r.type, queue: r.q, enqueuedAt: r.t, address: r.obj)
    session!.live[r.id] = slice
    session!.liveByAddress[r.obj] = r.id
    counts.slices += 1
    emit(
      "b",
      [
        ("cat", .string("object")), ("name", .string(r.type)), ("id", .int(Int64(nextSliceID))),
        ("ts", ts(r.t)), ("pid", .int(session!.pid)),
        ("tid", .int(r.tid ?? Self.syntheticThread)),
      ],
      args: [
        ("id", .int(Int64(r.id))), ("obj", .string(r.obj.description)),
        ("queue", .string(r.q)), ("rc", r.rc.map { .int(Int64($0)) }),
      ])
    let depth = r.depth ?? ((session!.queues[r.q]?.depth ?? 0) + 1)
    sample(queue: r.q, depth: depth, at: r.t, tid: r.tid)
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
    emit(
      "e",
      [
        ("cat", .string("object")), ("name", .string(slice.type)),
        ("id", .int(Int64(slice.sliceID))), ("ts", ts(max(r.t, slice.enqueuedAt))),
        ("pid", .int(session!.pid)), ("tid", .int(r.tid ?? Self.syntheticThread)),
      ],
      args: [("freed", .bool(r.freed)), ("rc", r.rc.map { .int(Int64($0)) })])
    sample(
      queue: slice.queue, depth: max(0, (session!.queues[slice.queue]?.depth ?? 1) - 1), at: r.t,
      tid: r.tid)
    if !r.freed {
      session!.survivors[r.id] = ExportSession.Survivor(live: slice, releasedAt: r.t)
    }
  }

  private mutating func dealloc(_ r: DeallocRecord, at location: LogLocation) {
    guard let survivor = session!.survivors.removeValue(forKey: r.id) else {
      warn(
        LogWarning(
          .inconsistentRecord, at: location,
          "dealloc of id \(r.id), which did not survive a release; skipped"))
      return
    }
    counts.instants += 1
    emit(
      "i",
      [
        ("name", .string("late dealloc: " + survivor.live.type)), ("cat", .string("dealloc")),
        ("s", .string("t")), ("ts", ts(r.t)), ("pid", .int(session!.pid)),
        ("tid", .int(Self.syntheticThread)),
      ],
      args: [
        ("id", .int(Int64(r.id))), ("obj", .string(survivor.live.address.description)),
        ("type", .string(survivor.live.type)),
        ("after_release_us", ts(r.t - survivor.releasedAt)),
      ])
  }

  /// The same rule as the analyzer: a check that saw its object alive is a false leak when
  /// the object (by id, else by the address's latest enqueue) was in a queue at the check.
  private mutating func check(_ r: CheckRecord) {
    var kind = "check passed"
    var verdict: String?
    if r.alive {
      let id = r.id ?? session!.liveByAddress[r.obj]
      let inQueue = id.flatMap { session!.live[$0] }.map { $0.enqueuedAt <= r.t } ?? false
      verdict = inQueue ? "falseLeak" : "trueLeak"
      kind = inQueue ? "false leak" : "true leak"
    }
    counts.instants += 1
    emit(
      "i",
      [
        ("name", .string(kind + ": " + r.type)), ("cat", .string("check")), ("s", .string("t")),
        ("ts", ts(r.t)), ("pid", .int(session!.pid)), ("tid", .int(Self.syntheticThread)),
      ],
      args: [
        ("label", .string(r.label)), ("type", .string(r.type)), ("obj", .string(r.obj.description)),
        ("alive", .bool(r.alive)), ("verdict", verdict.map { .string($0) }),
        ("id", r.id.map { .int(Int64($0)) }),
      ])
  }

  private mutating func sample(queue: String, depth: Int, at t: Int64, tid: Int64?) {
    var counter = session!.queues[queue] ?? ExportSession.Counter()
    let time = max(t, counter.lastTime)
    counter.depth = depth
    counter.lastTime = time
    session!.queues[queue] = counter
    counts.counterSamples += 1
    emit(
      "C",
      [
        ("name", .string("queue " + queue)), ("ts", ts(time)), ("pid", .int(session!.pid)),
        ("tid", .int(tid ?? Self.syntheticThread)),
      ],
      args: [("depth", .int(Int64(depth)))])
  }

  private mutating func end(_ ending: SessionEnding) {
    let pid = session!.pid
    let last = ending.lastTime
    for (id, slice) in session!.live.sorted(by: { $0.value.sliceID < $1.value.sliceID }) {
      let state: ObjectState =
        ending.end != nil
        ? .neverReleased : (last - slice.enqueuedAt > stuckAfter ? .stuck : .pending)
      counts.unreleasedSlices += 1
      emit(
        "e",
        [
          ("cat", .string("object")), ("name", .string(slice.type)),
          ("id", .int(Int64(slice.sliceID))), ("ts", ts(max(last, slice.enqueuedAt))),
          ("pid", .int(pid)), ("tid", .int(Self.syntheticThread)),
        ],
        args: [
          ("unreleased", .bool(true)), ("state", .string(state.rawValue)),
          ("log_id", .int(Int64(id))),
        ])
    }
    for (id, survivor) in session!.survivors.sorted(by: {
      $0.value.live.sliceID < $1.value.live.sliceID
    }) {
      counts.instants += 1
      emit(
        "i",
        [
          ("name", .string("leaked: " + survivor.live.type)), ("cat", .string("leak")),
          ("s", .string("t")), ("ts", ts(last)), ("pid", .int(pid)),
          ("tid", .int(Self.syntheticThread)),
        ],
        args: [
          ("id", .int(Int64(id))), ("obj", .string(survivor.live.address.description)),
          ("released_at_us", ts(survivor.releasedAt)),
        ])
    }
  }
}

/// What the exporter keeps while one session is read.
private struct ExportSession {
  struct Live {
    var sliceID: UInt64
    var type: String
    var queue: String
    var enqueuedAt: Int64
    var address: Address
  }

  struct Survivor {
    var live: Live
    var releasedAt: Int64
  }

  struct Counter {
    var depth = 0
    var lastTime: Int64 = .min
  }

  let info: SessionInfo
  let pid: Int64
  var live: [UInt64: Live] = [:]
  var liveByAddress: [Address: UInt64] = [:]
  var survivors: [UInt64: Survivor] = [:]
  var queues: [String: Counter] = [:]

  init(info: SessionInfo, pid: Int64) {
    self.info = info
    self.pid = pid
  }
}
