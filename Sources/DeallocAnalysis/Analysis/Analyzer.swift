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
  /// The session being read; meaningful only while `inSession`.
  private var state = SessionState(
    SessionInfo(index: -1, file: "", line: 0, record: SessionRecord(v: 1)))
  private var inSession = false
  private var sessions: [SessionReport] = []
  private var summary = Summary()
  private var findings = FindingCollector()
  private var checks: [CheckVerdict] = []
  private var latency = LatencySection()
  private var types: [TypeRow] = []
  private var typeIndex: [String: Int] = [:]
  private var recentTypes: [Int] = []
  private var warnings: CappedWarnings

  public init(
    options: AnalysisOptions = AnalysisOptions(), symbolizer: (any FrameSymbolizer)? = nil
  ) {
    self.options = options
    self.warnings = CappedWarnings(limit: options.maximumWarnings)
    self.symbolizer = symbolizer
    self.findings.maximumExamples = options.maximumExamples
  }

  public mutating func warn(_ warning: LogWarning) {
    warnings.add(warning)
  }

  public mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info):
      state = SessionState(info)
      inSession = true
    case .record(let record):
      guard inSession else { return }
      apply(record, line: location.line)
    case .sessionEnded(let ending):
      guard inSession else { return }
      finishSession(ending)
      inSession = false
      state = SessionState(state.info)
    }
  }

  /// The report, once every input has been read.
  public consuming func finish(inputs: [String]) -> Report {
    if let problems = symbolizer?.problems {
      for problem in problems { warn(LogWarning(.symbolization, at: nil, problem)) }
    }
    let rows = types.sorted { ($0.enqueued, $1.type) > ($1.enqueued, $0.type) }
    return Report(
      inputs: inputs, options: options, summary: summary, sessions: sessions,
      findings: findings.sorted(), checks: checks, latency: latency, types: rows,
      warnings: warnings.kept, omittedWarnings: warnings.omitted)
  }

  /// Objects the analyzer holds now (in a queue, or survivors of their release): the state
  /// that must not grow with the log's size. A test hook.
  package var trackedObjectCount: Int { state.live.count + state.survivors.count }

  // MARK: - Records

  private mutating func apply(_ record: LogRecord, line: Int) {
    switch record {
    case .stack(let stack):
      state.stacks[stack.id] = stack.frames
    case .thread(let thread):
      state.threads[thread.tid] = thread.name
    case .enqueue(let enqueue):
      applyEnqueue(enqueue, line: line)
    case .release(let release):
      applyRelease(release, line: line)
    case .dealloc(let dealloc):
      applyDealloc(dealloc, line: line)
    case .drain(let drain):
      state.timelines[state.timeline(drain.q)].drains += 1
    case .mark(let mark):
      if state.marks.count < options.maximumListedMarks {
        state.marks.append(mark)
      } else {
        state.omittedMarks += 1
      }
    case .check(let check):
      applyCheck(check, line: line)
    case .end, .session, .unknown:
      break
    }
  }

  private mutating func applyEnqueue(_ r: EnqueueRecord, line: Int) {
    if state.live[r.id] != nil || state.survivors[r.id] != nil {
      inconsistent(line, "enqueue reuses id \(r.id), which is still in use; the record is skipped")
      return
    }
    let type = row(r.type)
    let queue = state.timeline(r.q)
    let object = SessionState.Live(
      enqueuedAt: r.t, address: r.obj, type: Int32(type), queue: Int32(queue), stack: r.stack,
      line: line)
    state.live[r.id] = object
    state.liveByAddress[r.obj.rawValue] = r.id
    // The address's latest enqueue is now this one; a survivor that had it stays leaked
    // (the contract wants a `dealloc` record) but no longer answers checks of the address.
    state.survivorByAddress[r.obj.rawValue] = nil
    state.summary.enqueued += 1
    types[type].enqueued += 1
    state.timelines[queue].enqueued += 1
    state.timelines[queue].record(depth: r.depth ?? (state.timelines[queue].depth + 1), at: r.t)
  }

  private mutating func applyRelease(_ r: ReleaseRecord, line: Int) {
    guard let object = state.live.removeValue(forKey: r.id) else {
      inconsistent(line, "release of id \(r.id), which is not in a queue; the record is skipped")
      return
    }
    if state.liveByAddress[object.address.rawValue] == r.id {
      state.liveByAddress[object.address.rawValue] = nil
    }
    state.summary.released += 1
    let waited = r.t - object.enqueuedAt
    latency.enqueueToRelease.add(waited)
    types[Int(object.type)].enqueueToRelease.add(waited)
    state.timelines[Int(object.queue)].recordRelease(at: r.t)
    if r.freed {
      state.summary.freed += 1
      types[Int(object.type)][.freed] += 1
    } else {
      state.survivors[r.id] = SessionState.Survivor(
        live: object, releasedAt: r.t, retainCount: r.rc, line: line)
      state.survivorByAddress[object.address.rawValue] = r.id
    }
    for index in state.watched.isEmpty ? [] : state.watched[r.id] ?? [] {
      state.checks[index].facts?.releasedAt = r.t
      state.checks[index].facts?.freedByRelease = r.freed
      state.checks[index].facts?.retainCountAfterRelease = r.rc
      if r.freed { state.checks[index].facts?.state = .freed }
    }
  }

  private mutating func applyDealloc(_ r: DeallocRecord, line: Int) {
    guard let survivor = state.survivors.removeValue(forKey: r.id) else {
      inconsistent(line, "dealloc of id \(r.id), which did not survive a release; skipped")
      return
    }
    if state.survivorByAddress[survivor.live.address.rawValue] == r.id {
      state.survivorByAddress[survivor.live.address.rawValue] = nil
    }
    state.summary.late += 1
    types[Int(survivor.live.type)][.late] += 1
    latency.releaseToDealloc.add(r.t - survivor.releasedAt)
    for index in state.watched.isEmpty ? [] : state.watched[r.id] ?? [] {
      state.checks[index].facts?.deallocAt = r.t
      state.checks[index].facts?.state = .late
    }
  }

  private mutating func applyCheck(_ check: CheckRecord, line: Int) {
    state.summary.checks += 1
    guard check.alive else { return }
    // Match the object: by id when the check has one, else by the address's latest enqueue.
    var id = check.id
    if id == nil {
      id = state.liveByAddress[check.obj.rawValue] ?? state.survivorByAddress[check.obj.rawValue]
    }
    var facts: ObjectFacts?
    var stack: Int64?
    var inQueue = false
    if let id, let object = state.live[id] {
      inQueue = object.enqueuedAt <= check.t
      facts = self.facts(id: id, object)
      stack = object.stack
    } else if let id, let survivor = state.survivors[id] {
      facts = self.facts(id: id, survivor.live)
      facts?.releasedAt = survivor.releasedAt
      facts?.freedByRelease = false
      facts?.retainCountAfterRelease = survivor.retainCount
      stack = survivor.live.stack
    }
    let verdict: CheckVerdict.Verdict = inQueue ? .falseLeak : .trueLeak
    if inQueue {
      state.summary.falseLeaks += 1
      types[row(check.type)].falseLeaks += 1
    } else {
      state.summary.trueLeaks += 1
      types[row(check.type)].trueLeaks += 1
    }
    let listed = checks.count + state.checks.count < options.maximumListedChecks
    guard listed || verdict == .trueLeak else { return }
    state.checks.append(
      SessionState.PendingCheck(
        verdict: verdict, check: check, line: line, facts: facts, stack: stack))
    if let facts { state.watched[facts.id, default: []].append(state.checks.count - 1) }
  }

  private func facts(id: UInt64, _ object: SessionState.Live) -> ObjectFacts {
    ObjectFacts(
      id: id, address: object.address, type: typeName(object), queue: queueName(object),
      enqueuedAt: object.enqueuedAt, enqueuedBy: nil)
  }

  private func typeName(_ object: SessionState.Live) -> String { types[Int(object.type)].type }
  private func queueName(_ object: SessionState.Live) -> String {
    state.timelines[Int(object.queue)].queue
  }

  /// The index of `type`'s row, created on first use. A short scan of the latest rows
  /// (interned names compare by identity first) avoids hashing the name for every record.
  private mutating func row(_ type: String) -> Int {
    for index in recentTypes where types[index].type == type { return index }
    let index: Int
    if let known = typeIndex[type] {
      index = known
    } else {
      index = types.count
      types.append(TypeRow(type: type))
      typeIndex[type] = index
    }
    if recentTypes.count == 8 { recentTypes.removeFirst() }
    recentTypes.append(index)
    return index
  }

  private mutating func inconsistent(_ line: Int, _ message: String) {
    warn(
      LogWarning(
        .inconsistentRecord, at: LogLocation(file: state.info.file, line: line), message))
  }

  // MARK: - Session end

  /// The stack's frames, symbolized once per session.
  private mutating func frames(_ stack: Int64?) -> [Frame] {
    guard let stack, let raw = state.stacks[stack] else { return [] }
    if let done = state.symbolizedStacks[stack] { return done }
    let resolved = symbolizer?.symbolize(raw) ?? raw
    state.symbolizedStacks[stack] = resolved
    return resolved
  }

  private mutating func finishSession(_ ending: SessionEnding) {
    let file = state.info.file
    let index = state.info.index
    let lastTime = ending.lastTime
    let ended = ending.end != nil

    // Survivors never deallocated: leaked.
    for (id, survivor) in state.survivors.entries.sorted(by: { $0.value.line < $1.value.line }) {
      state.summary.leaked += 1
      types[Int(survivor.live.type)][.leaked] += 1
      let stack = frames(survivor.live.stack)
      let type = typeName(survivor.live)
      findings.add(
        .leaked, Signature(type: type, stack: stack), stack: stack,
        FindingExample(
          session: index, id: id, address: survivor.live.address, type: type,
          queue: queueName(survivor.live), enqueuedAt: survivor.live.enqueuedAt,
          releasedAt: survivor.releasedAt, retainCount: survivor.retainCount,
          location: LogLocation(file: file, line: survivor.line)))
      for check in state.watched[id] ?? [] { state.checks[check].facts?.state = .leaked }
    }
    // Objects still in a queue: pending, stuck or never released.
    for (id, object) in state.live.entries.sorted(by: { $0.value.line < $1.value.line }) {
      let age = lastTime - object.enqueuedAt
      let objectState: ObjectState =
        ended ? .neverReleased : (age > options.stuckAfter ? .stuck : .pending)
      state.summary[objectState] += 1
      types[Int(object.type)][objectState] += 1
      for check in state.watched[id] ?? [] { state.checks[check].facts?.state = objectState }
      guard objectState != .pending else { continue }
      let stack = frames(object.stack)
      let type = typeName(object)
      findings.add(
        objectState == .stuck ? .stuck : .neverReleased, Signature(type: type, stack: stack),
        stack: stack,
        FindingExample(
          session: index, id: id, address: object.address, type: type,
          queue: queueName(object), enqueuedAt: object.enqueuedAt, age: age,
          location: LogLocation(file: file, line: object.line)))
    }
    // Checks: explain, list, and group the true leaks.
    for pending in state.checks {
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

    let timelines = state.timelines
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
