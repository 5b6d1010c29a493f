import CTraceRuntime
import DeallocHooks
import DeallocWire
import Dispatch
import Glibc

/// The writer thread: formats the recorded events as JSON lines and writes them.
///
/// Type names, stacks and symbols are resolved here, once each, so that recording threads
/// never pay for them. A record reaches the kernel (which keeps it if the process is
/// killed) within `flushIntervalNanoseconds` plus `formattingBudgetNanoseconds` while the
/// writer keeps up, inside the bound `docs/log-format.md` documents. What can stretch it:
/// a new stack's first address in a large library (its symbol tables are read once), and
/// a backlog, which back-pressure caps at one buffer (`TraceSession.bufferCapacity`). On an
/// I/O error it says so once on stderr and stops the session; the host carries on.
final class LogWriter: @unchecked Sendable {
  private let session: TraceSession
  private let clock: WriterClock
  private var line = JSONLine()
  private var stacks = StackTable()
  private var symbols = Symbolizer()
  /// The modules whose build id this session has written (on the first frame naming each).
  private var introducedModules: Set<String> = []
  private var typeNames: [UnsafeRawPointer: String] = [:]
  private var enqueued = 0
  private var released = 0
  private var lastSurvivorCheck: UInt64 = 0
  /// Set when formatting symbolized a new stack, the one slow step: time to look at the clock.
  private var symbolizedSinceLastLook = false
  /// The log file's size as far as this writer knows (earlier sessions included), for
  /// `DEALLOCTRACE_MAX_SIZE`.
  private var bytesInFile: UInt64 = 0
  /// Whether the log was cut at the size limit, and the records not written since.
  private var isCut = false
  private var unwritten = 0

  /// How long the writer sleeps when nothing arrives (it also wakes at a half-full buffer).
  static let flushIntervalNanoseconds: UInt64 = 50_000_000
  /// How long the writer formats before it writes out what it has so far (and it writes at
  /// the end of each batch).
  static let formattingBudgetNanoseconds: UInt64 = 40_000_000
  /// How often the writer has survivors looked at while any are watched.
  static let survivorCheckIntervalNanoseconds: UInt64 = 100_000_000
  /// Room kept below `DEALLOCTRACE_MAX_SIZE` for the `cut` and `end` records (each under a
  /// hundred bytes), so that a cut log still ends within its limit.
  static let cutReserveBytes: UInt64 = 512

  init(session: TraceSession, clock: WriterClock = .real) {
    self.session = session
    self.clock = clock
  }

  /// The writer thread's stack: it formats lines and demangles names, never deep recursion,
  /// and the default (8 MiB, RLIMIT_STACK) counts against an address-space limit that the
  /// host's own threads need (`ulimit -v`: libdispatch then could not start a worker, and
  /// queues never drained).
  static let threadStackBytes = 1 << 20

  /// Starts the writer on a thread of its own (not a dispatch worker: it blocks). Returns
  /// the error of `pthread_create` (0: started); the session cannot record without it.
  static func spawn(for session: TraceSession, clock: WriterClock = .real) -> Int32 {
    let writer = Unmanaged.passRetained(LogWriter(session: session, clock: clock))
    let status = ctrace_start_thread(
      { context in
        let writer = Unmanaged<LogWriter>.fromOpaque(context!).takeRetainedValue()
        // On this thread only: a write past a file size limit or into a pipe nobody reads
        // then fails with EFBIG or EPIPE instead of killing the host (the mask is the
        // thread's own; the host's dispositions are untouched).
        ctrace_block_write_signals()
        writer.run()
        return nil
      }, writer.toOpaque(), threadStackBytes)
    if status != 0 { writer.release() }
    return status
  }

  private func run() {
    ctrace_set_writer_thread(1)
    ctrace_set_thread_name("dealloctrace")
    var batch: [TraceEvent] = []
    var frames: [UInt] = []
    bytesInFile = session.file.currentSize()
    batch.reserveCapacity(session.buffer.capacity + 64)
    frames.reserveCapacity((session.buffer.capacity + 64) * max(session.frames, 1))
    while true {
      let state = clock.take(session.buffer, &batch, &frames, Self.flushIntervalNanoseconds)
      do throws(DeallocTraceError) {
        try writeOut(batch, frames: frames)
        if state == .closing {
          waitForReleasesUnderWay()
          writeEnd()
          try writeFormatted()
        }
        try session.file.checkStillLinked()
      } catch {
        Tracer.stop(session, failure: error)
        end()
        return
      }
      batch.removeAll(keepingCapacity: true)
      frames.removeAll(keepingCapacity: true)
      if state != .open {
        session.file.close()
        end()
        return
      }
      scheduleSurvivorCheckIfDue()
    }
  }

  /// Formats `batch` and writes it, in pieces when formatting takes longer than the budget.
  private func writeOut(_ batch: [TraceEvent], frames: [UInt]) throws(DeallocTraceError) {
    var pieceStart = clock.now()
    var formatted = 0
    for event in batch {
      formatWithinLimit(event, frames: frames)
      formatted += 1
      guard formatted & 15 == 0 || symbolizedSinceLastLook else { continue }
      symbolizedSinceLastLook = false
      let now = clock.now()
      if now &- pieceStart >= Self.formattingBudgetNanoseconds {
        try writeFormatted()
        session.buffer.markWritten(formatted)
        formatted = 0
        pieceStart = now
      }
    }
    try writeFormatted()
    if formatted > 0 { session.buffer.markWritten(formatted) }
  }

  private func writeFormatted() throws(DeallocTraceError) {
    guard !line.bytes.isEmpty else { return }
    try session.file.write(line.bytes)
    bytesInFile &+= UInt64(line.bytes.count)
    line.bytes.removeAll(keepingCapacity: true)
  }

  /// Formats `event` unless the log has reached `DEALLOCTRACE_MAX_SIZE`: then the record that
  /// would cross the limit (with its stack) is taken back, one `cut` record is written in its
  /// place, one line goes to stderr, and from then on records are only counted (`end`'s
  /// `unwritten`). Counting goes on so that the reader learns how much it is missing.
  private func formatWithinLimit(_ event: TraceEvent, frames: [UInt]) {
    guard !isCut else {
      unwritten += 1
      return
    }
    guard let maxSize = session.maxSize else {
      format(event, frames: frames)
      return
    }
    let start = line.bytes.count
    let counts = (enqueued, released)
    format(event, frames: frames)
    guard bytesInFile &+ UInt64(line.bytes.count) &+ Self.cutReserveBytes > maxSize else { return }
    line.bytes.removeSubrange(start...)
    (enqueued, released) = counts
    isCut = true
    unwritten = 1
    StandardError.write(
      "dealloctrace: log \(escaped: session.file.path) reached DEALLOCTRACE_MAX_SIZE"
        + " (\(maxSize) bytes); later records are counted in its end record, not written")
    line.begin("cut")
    line.field("t", session.now())
    line.field("max_size", maxSize)
    line.end()
  }

  /// Gives releases under way (their `deinit` running) a bounded moment to hand over their
  /// record, which the closed buffer refuses and counts, so that `lost` and `pending` in
  /// `end` see them. Polled: this runs once per session.
  private func waitForReleasesUnderWay() {
    ctrace_test_before_release_wait()
    let deadline = ctrace_monotonic_ns() &+ TraceSession.releaseWaitNanoseconds
    while session.releasesUnderWay.load(ordering: .sequentiallyConsistent) > 0
      && ctrace_monotonic_ns() < deadline
    {
      usleep(1_000)
    }
  }

  private func end() {
    session.isOver.store(true, ordering: .releasing)
    session.writerFinished.signal()
  }

  /// Survivors are checked off this thread: loading a weak reference can end up releasing
  /// the object last, and its `deinit` (user code) must never run on the writer.
  private func scheduleSurvivorCheckIfDue() {
    guard session.survivorCount.load(ordering: .relaxed) > 0 else { return }
    let now = session.now()
    guard now &- lastSurvivorCheck >= Self.survivorCheckIntervalNanoseconds else { return }
    lastSurvivorCheck = now
    let session = self.session
    DispatchQueue.global().async { Tracer.checkSurvivors(session) }
  }

  private func writeEnd() {
    line.begin("end")
    line.field("t", session.now())
    line.field(
      "why",
      (TraceSession.EndReason(rawValue: session.endReason.load(ordering: .acquiring)) ?? .explicit)
        .name)
    // Read after the last batch: the buffer is closed, so these counts are final for every
    // record offered before now; records offered later cannot be counted anywhere.
    let refused = session.buffer.refusals()
    // An object whose release was refused is not in any queue: it is lost, not pending.
    line.field("pending", max(0, enqueued - released - refused.releasesOfRecordedObjects))
    line.field("lost", refused.records)
    if isCut { line.field("unwritten", unwritten) }
    if let budget = session.holderBudget {
      let counts = budget.counts()
      line.field("holder_scans", counts.scans)
      line.field("holder_scans_skipped", counts.skipped)
      if counts.failed > 0 { line.field("holder_scans_failed", counts.failed) }
    }
    line.end()
  }

  private func format(_ event: TraceEvent, frames: [UInt]) {
    switch event.payload {
    case .thread(let name):
      line.begin("thread")
      line.field("tid", event.threadID)
      line.field("name", name)
      line.end()
    case .enqueue(let enqueue):
      formatEnqueue(enqueue, of: event, frames: frames)
    case .drain(let queue, let count, let why):
      line.drain(
        time: event.time, queue: queue, count: count, threadID: event.threadID, reason: why)
    case .release(let objectID, let outcome):
      formatRelease(objectID: objectID, outcome: outcome, of: event)
    case .dealloc(let objectID):
      session.holderBudget?.forget(id: objectID)
      line.dealloc(time: event.time, id: objectID)
    case .mark(let label):
      line.begin("mark")
      line.field("t", event.time)
      line.field("label", label)
      line.field("tid", event.threadID)
      line.end()
    case .check(let check):
      formatCheck(check, of: event)
    case .holders(let scan):
      formatHolders(scan, at: event.time)
    case .census(let members):
      line.begin("census")
      line.field("t", event.time)
      line.field("tid", event.threadID)
      line.members(ofObject: "{" + members + "}")
      line.end()
    }
  }

  private func formatEnqueue(_ enqueue: TraceEvent.Enqueue, of event: TraceEvent, frames: [UInt]) {
    var stackID: Int?
    if event.frameCount > 0 {
      let slice = frames[event.frameStart..<event.frameStart + event.frameCount]
      let interned = stacks.intern(slice)
      if interned.isNew {
        writeStack(interned.id, slice)
        symbolizedSinceLastLook = true
      }
      stackID = interned.id
    }
    enqueued += 1
    session.holderBudget?.noteEnqueue(id: enqueue.objectID, stack: stackID ?? 0)
    line.enqueue(
      time: event.time, id: enqueue.objectID, hiddenAddress: enqueue.hiddenAddress,
      type: typeName(of: .metatype(enqueue.metatype)), queue: enqueue.queue,
      threadID: event.threadID, depth: enqueue.depth, stack: stackID,
      retainCount: enqueue.retainCount, elementCount: enqueue.elementCount)
  }

  private func formatRelease(
    objectID: UInt64, outcome: TraceEvent.ReleaseOutcome, of event: TraceEvent
  ) {
    released += 1
    var survivorRetainCount: Int?
    switch outcome {
    case .freed: session.holderBudget?.forget(id: objectID)
    case .survived(let retainCount): survivorRetainCount = retainCount
    }
    line.release(
      time: event.time, id: objectID, threadID: event.threadID,
      survivorRetainCount: survivorRetainCount)
  }

  private func formatCheck(_ check: TraceEvent.Check, of event: TraceEvent) {
    line.check(
      time: event.time, hiddenAddress: check.hiddenAddress, type: typeName(of: check.type),
      alive: check.alive, label: check.label, id: check.objectID, threadID: event.threadID)
  }

  /// `{"ev":"holders","t":…,"id":…,"obj":…,"type":…,"why":…,` then the scanner's
  /// HOLDERS-VALUE members (`direct`, `more`, `paths`, `scan_us`) `}`.
  private func formatHolders(_ scan: TraceEvent.HolderScan, at time: UInt64) {
    line.begin("holders")
    line.field("t", time)
    if scan.objectID != 0 { line.field("id", scan.objectID) }
    line.field("obj", hiddenHex: scan.hiddenAddress)
    line.field("type", typeName(of: scan.type))
    line.field("why", scan.why.name)
    if !scan.allocationStack.isEmpty {
      line.key("allocStack")
      writeFrames(scan.allocationStack[...])
    }
    if let history = scan.history { writeHistory(history) }
    scan.holders.writeMembers(into: &line)
    line.end()
  }

  private func writeStack(_ id: Int, _ frames: ArraySlice<UInt>) {
    line.begin("stack")
    line.field("id", id)
    line.key("frames")
    writeFrames(frames)
    line.end()
  }

  /// `"history":{"events":[{"op":"retain","count":2,"frames":[…]},…],"dropped":…,"lost":…}`
  /// (`op`: `retain`, `release`, `alloc`, `enqueue`, `unowned-retain` or `unowned-release`)
  /// (DEALLOCTRACE_HISTORY): the object's retains and releases, oldest first; `dropped` and
  /// `lost` only when not 0.
  private func writeHistory(_ history: TraceEvent.RetainHistory) {
    line.key("history")
    line.object { object in
      object.key("events")
      object.beginArray()
      for event in history.events {
        object.element()
        object.object { fields in
          fields.field("op", event.op)
          if event.countAfter >= 0 { fields.field("count", event.countAfter) }
          fields.key("frames")
          writeFrames(event.frames[...], to: &fields)
        }
      }
      object.endArray()
      if history.dropped > 0 { object.field("dropped", history.dropped) }
      if history.lost > 0 { object.field("lost", history.lost) }
    }
  }

  /// `[{"ip":…,"mod":…,"off":…,"sym":…},…]`: return addresses as a `stack` record's frames.
  private func writeFrames(_ frames: ArraySlice<UInt>) {
    writeFrames(frames, to: &line)
  }

  private func writeFrames(_ frames: ArraySlice<UInt>, to line: inout JSONLine) {
    line.beginArray()
    for address in frames {
      line.element()
      let frame = symbols.frame(forReturnAddress: address)
      line.object { object in
        object.field("ip", hex: address)
        if let module = frame.module { object.field("mod", module) }
        if let offset = frame.offset { object.field("off", hex: offset) }
        if let symbol = frame.symbol { object.field("sym", symbol) }
        if let module = frame.module, let buildID = frame.buildID,
          introducedModules.insert(module).inserted
        {
          object.field("build_id", buildID)
        }
      }
    }
    line.endArray()
  }

  private func typeName(of type: TraceEvent.RecordedType) -> String {
    switch type {
    case .name(let name):
      return name
    case .metatype(let metatype):
      if let known = typeNames[metatype] { return known }
      let name = LocalTypeName.stable(
        String(reflecting: unsafeBitCast(metatype, to: Any.Type.self)))
      typeNames[metatype] = name
      return name
    }
  }
}
