/// Derives every object's state, the verdict of every leak check, and the grouped findings,
/// from a stream of log events.
///
/// Why a visitor: it reads each record once and keeps only objects still in a queue,
/// survivors of their release, distinct stacks and bounded aggregates, so a 1 GB log costs
/// memory in proportion to what is unreleased, not to its size. Use it through
/// ``DeallocAnalysis/analyze(_:options:symbolizer:)`` or feed it a ``LogReader`` yourself and
/// call ``finish(inputs:)``.
public struct Analyzer: LogVisitor {
  public let options: AnalysisOptions
  private var symbolizer: (any FrameSymbolizer)?
  private var session: SessionState?
  private var sessions: [SessionReport] = []
  private var summary = Summary()
  private var findings = FindingCollector()
  private var checks: [CheckVerdict] = []
  private var latency = LatencySection()
  private var types: [String: TypeRow] = [:]
  private var warnings: [LogWarning] = []
  private var omittedWarnings = 0

  public init(
    options: AnalysisOptions = AnalysisOptions(), symbolizer: (any FrameSymbolizer)? = nil
  ) {
    self.options = options
    self.symbolizer = symbolizer
    self.findings.maximumExamples = options.maximumExamples
  }

  public mutating func warn(_ warning: LogWarning) {
    if warnings.count < options.maximumWarnings {
      warnings.append(warning)
    } else {
      omittedWarnings += 1
    }
  }

  public mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info):
      session = SessionState(info)
    case .record(let record):
      guard session != nil else { return }
      apply(record, line: location.line)
    case .sessionEnded(let ending):
      guard session != nil else { return }
      finishSession(ending)
      session = nil
    }
  }

  /// The report, once every input has been read.
  public consuming func finish(inputs: [String]) -> Report {
    if let problems = symbolizer?.problems {
      for problem in problems { warn(LogWarning(.symbolization, at: nil, problem)) }
    }
    let rows = types.values.sorted { ($0.enqueued, $1.type) > ($1.enqueued, $0.type) }
    return Report(
      inputs: inputs, options: options, summary: summary, sessions: sessions,
      findings: findings.sorted(), checks: checks, latency: latency, types: rows,
      warnings: warnings, omittedWarnings: omittedWarnings)
  }

  // MARK: - Records

  private mutating func apply(_ record: LogRecord, line: Int) {
    switch record {
    case .stack(let stack):
      session!.stacks[stack.id] = stack.frames
    case .thread(let thread):
      session!.threads[thread.tid] = thread.name
    case .enqueue(let enqueue):
      applyEnqueue(enqueue, line: line)
    case .release(let release):
      applyRelease(release, line: line)
    case .dealloc(let dealloc):
      applyDealloc(dealloc, line: line)
    case .drain(let drain):
      var timeline = session!.timeline(drain.q)
      timeline.drains += 1
      session!.queues[drain.q] = timeline
    case .mark(let mark):
      if session!.marks.count < options.maximumListedMarks {
        session!.marks.append(mark)
      } else {
        session!.omittedMarks += 1
      }
    case .check(let check):
      applyCheck(check, line: line)
    case .end, .session, .unknown:
      break
    }
  }

  private mutating func applyEnqueue(_ r: EnqueueRecord, line: Int) {
    if session!.live[r.id] != nil || session!.survivors[r.id] != nil {
      inconsistent(line, "enqueue reuses id \(r.id), which is still in use; the record is skipped")
      return
    }
    let object = SessionState.Live(
      enqueuedAt: r.t, address: r.obj, type: r.type, queue: r.q, stack: r.stack, line: line)
    session!.live[r.id] = object
    session!.liveByAddress[r.obj] = r.id
    // The address's latest enqueue is now this one; a survivor that had it stays leaked
    // (the contract wants a `dealloc` record) but no longer answers checks of the address.
    session!.survivorByAddress[r.obj] = nil
    session!.summary.enqueued += 1
    types[r.type, default: TypeRow(type: r.type)].enqueued += 1
    var timeline = session!.timeline(r.q)
    timeline.enqueued += 1
    timeline.record(depth: r.depth ?? (timeline.depth + 1), at: r.t)
    session!.queues[r.q] = timeline
  }

  private mutating func applyRelease(_ r: ReleaseRecord, line: Int) {
    guard let object = session!.live.removeValue(forKey: r.id) else {
      inconsistent(line, "release of id \(r.id), which is not in a queue; the record is skipped")
      return
    }
    if session!.liveByAddress[object.address] == r.id {
      session!.liveByAddress[object.address] = nil
    }
    session!.summary.released += 1
    let waited = r.t - object.enqueuedAt
    latency.enqueueToRelease.add(waited)
    types[object.type]?.enqueueToRelease.add(waited)
    var timeline = session!.timeline(object.queue)
    timeline.recordRelease(at: r.t)
    session!.queues[object.queue] = timeline
    if r.freed {
      session!.summary.freed += 1
      types[object.type]?.states[.freed, default: 0] += 1
    } else {
      session!.survivors[r.id] = SessionState.Survivor(
        live: object, releasedAt: r.t, retainCount: r.rc, line: line)
      session!.survivorByAddress[object.address] = r.id
    }
    for index in session!.watched[r.id] ?? [] {
      session!.checks[index].facts?.releasedAt = r.t
      session!.checks[index].facts?.freedByRelease = r.freed
      session!.checks[index].facts?.retainCountAfterRelease = r.rc
      if r.freed { session!.checks[index].facts?.state = .freed }
    }
  }

  private mutating func applyDealloc(_ r: DeallocRecord, line: Int) {
    guard let survivor = session!.survivors.removeValue(forKey: r.id) else {
      inconsistent(line, "dealloc of id \(r.id), which did not survive a release; skipped")
      return
    }
    if session!.survivorByAddress[survivor.live.address] == r.id {
      session!.survivorByAddress[survivor.live.address] = nil
    }
    session!.summary.late += 1
    types[survivor.live.type]?.states[.late, default: 0] += 1
    latency.releaseToDealloc.add(r.t - survivor.releasedAt)
    for index in session!.watched[r.id] ?? [] {
      session!.checks[index].facts?.deallocAt = r.t
      session!.checks[index].facts?.state = .late
    }
  }

  private mutating func applyCheck(_ check: CheckRecord, line: Int) {
    session!.summary.checks += 1
    guard check.alive else { return }
    // Match the object: by id when the check has one, else by the address's latest enqueue.
    var id = check.id
    if id == nil {
      id = session!.liveByAddress[check.obj] ?? session!.survivorByAddress[check.obj]
    }
    var facts: ObjectFacts?
    var stack: Int64?
    var inQueue = false
    if let id, let object = session!.live[id] {
      inQueue = object.enqueuedAt <= check.t
      facts = self.facts(id: id, object)
      stack = object.stack
    } else if let id, let survivor = session!.survivors[id] {
      facts = self.facts(id: id, survivor.live)
      facts?.releasedAt = survivor.releasedAt
      facts?.freedByRelease = false
      facts?.retainCountAfterRelease = survivor.retainCount
      stack = survivor.live.stack
    }
    let verdict: CheckVerdict.Verdict = inQueue ? .falseLeak : .trueLeak
    if inQueue {
      session!.summary.falseLeaks += 1
      types[check.type, default: TypeRow(type: check.type)].falseLeaks += 1
    } else {
      session!.summary.trueLeaks += 1
      types[check.type, default: TypeRow(type: check.type)].trueLeaks += 1
    }
    let listed = checks.count + session!.checks.count < options.maximumListedChecks
    guard listed || verdict == .trueLeak else { return }
    session!.checks.append(
      SessionState.PendingCheck(
        verdict: verdict, check: check, line: line, facts: facts, stack: stack))
    if let facts { session!.watched[facts.id, default: []].append(session!.checks.count - 1) }
  }

  private mutating func facts(id: UInt64, _ object: SessionState.Live) -> ObjectFacts {
    ObjectFacts(
      id: id, address: object.address, type: object.type, queue: object.queue,
      enqueuedAt: object.enqueuedAt, enqueuedBy: nil)
  }

  private mutating func inconsistent(_ line: Int, _ message: String) {
    warn(
      LogWarning(
        .inconsistentRecord, at: LogLocation(file: session!.info.file, line: line), message))
  }

  // MARK: - Session end

  /// The stack's frames, symbolized once per session.
  private mutating func frames(_ stack: Int64?) -> [Frame] {
    guard let stack, let raw = session!.stacks[stack] else { return [] }
    if let done = session!.symbolizedStacks[stack] { return done }
    let resolved = symbolizer?.symbolize(raw) ?? raw
    session!.symbolizedStacks[stack] = resolved
    return resolved
  }

  private mutating func finishSession(_ ending: SessionEnding) {
    let file = session!.info.file
    let index = session!.info.index
    let lastTime = ending.lastTime
    let ended = ending.end != nil

    // Survivors never deallocated: leaked.
    for (id, survivor) in session!.survivors.sorted(by: { $0.value.line < $1.value.line }) {
      session!.summary.leaked += 1
      types[survivor.live.type]?.states[.leaked, default: 0] += 1
      let stack = frames(survivor.live.stack)
      findings.add(
        .leaked, Signature(type: survivor.live.type, stack: stack), stack: stack,
        FindingExample(
          session: index, id: id, address: survivor.live.address, type: survivor.live.type,
          queue: survivor.live.queue, enqueuedAt: survivor.live.enqueuedAt,
          releasedAt: survivor.releasedAt, retainCount: survivor.retainCount,
          location: LogLocation(file: file, line: survivor.line)))
      for check in session!.watched[id] ?? [] { session!.checks[check].facts?.state = .leaked }
    }
    // Objects still in a queue: pending, stuck or never released.
    for (id, object) in session!.live.sorted(by: { $0.value.line < $1.value.line }) {
      let age = lastTime - object.enqueuedAt
      let state: ObjectState =
        ended ? .neverReleased : (age > options.stuckAfter ? .stuck : .pending)
      session!.summary[state] += 1
      types[object.type]?.states[state, default: 0] += 1
      for check in session!.watched[id] ?? [] { session!.checks[check].facts?.state = state }
      guard state != .pending else { continue }
      let stack = frames(object.stack)
      findings.add(
        state == .stuck ? .stuck : .neverReleased, Signature(type: object.type, stack: stack),
        stack: stack,
        FindingExample(
          session: index, id: id, address: object.address, type: object.type,
          queue: object.queue, enqueuedAt: object.enqueuedAt, age: age,
          location: LogLocation(file: file, line: object.line)))
    }
    // Checks: explain, list, and group the true leaks.
    for pending in session!.checks {
      var facts = pending.facts
      let stack = frames(pending.stack)
      if facts != nil {
        facts!.enqueuedBy = Signature(type: facts!.type, stack: stack).frames.first
      }
      let location = LogLocation(file: file, line: pending.line)
      let verdict = CheckVerdict(
        verdict: pending.verdict, session: index, check: pending.check, location: location,
        object: facts,
        explanation: Explanations.check(
          pending.verdict, pending.check, facts, sessionEnd: lastTime, ended: ended))
      if pending.verdict == .trueLeak {
        findings.add(
          .trueLeak, Signature(type: pending.check.type, stack: stack), stack: stack,
          FindingExample(
            session: index, id: facts?.id, address: pending.check.obj, type: pending.check.type,
            queue: facts?.queue, enqueuedAt: facts?.enqueuedAt, releasedAt: facts?.releasedAt,
            retainCount: facts?.retainCountAfterRelease, checkedAt: pending.check.t,
            checkLabel: pending.check.label, location: location),
          verdict: verdict)
      }
      if checks.count < options.maximumListedChecks { checks.append(verdict) }
    }

    let state = session!
    let timelines = state.queueOrder.compactMap { state.queues[$0] }
    sessions.append(
      SessionReport(
        index: index, file: file, line: state.info.line, header: state.info.record,
        end: ending.end, truncated: ending.truncated, lastTime: lastTime, summary: state.summary,
        unknownKinds: ending.unknownKinds, malformedLines: ending.malformedLines, queues: timelines,
        marks: state.marks, omittedMarks: state.omittedMarks, threads: state.threads))
    summary.add(state.summary)
  }
}

extension Summary {
  /// Adds another summary's counts to this one.
  mutating func add(_ other: Summary) {
    sessions += other.sessions
    enqueued += other.enqueued
    released += other.released
    freed += other.freed
    late += other.late
    leaked += other.leaked
    pending += other.pending
    stuck += other.stuck
    neverReleased += other.neverReleased
    checks += other.checks
    falseLeaks += other.falseLeaks
    trueLeaks += other.trueLeaks
  }
}
