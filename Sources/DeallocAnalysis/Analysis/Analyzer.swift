import DeallocLog
import DeallocWire

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
    SessionInfo(index: -1, file: "", line: 0, record: SessionRecord(version: 1)))
  private var inSession = false
  private var sessions: [SessionReport] = []
  private var omittedSessions = 0
  private var peak: QueuePeak?
  private var hasIncompleteSession = false
  /// What is left of the report's budgets for per-session detail.
  private var marksLeft: Int
  private var threadNamesLeft: Int
  private var detailedTimelinesLeft: Int
  private var summary = Summary()
  private var findings = FindingCollector()
  private var checks: [CheckVerdict] = []
  private var latency = LatencySection()
  private var types: [TypeRow] = []
  private var typeIndex = NameRows()
  private var warnings: CappedWarnings
  private var holders = HolderSummary()
  private var lateHeld = LateHeldCollector()
  /// The `census` records read (the whole-process leak censuses).
  private var censuses = CensusSection()

  public init(
    options: AnalysisOptions = AnalysisOptions(), symbolizer: (any FrameSymbolizer)? = nil
  ) {
    self.options = options
    self.warnings = CappedWarnings(limit: options.maximumWarnings)
    self.symbolizer = symbolizer
    self.findings.maximumExamples = options.maximumExamples
    self.lateHeld.maximumExamples = options.maximumExamples
    self.marksLeft = options.maximumListedMarks
    self.threadNamesLeft = options.maximumThreadNames
    self.detailedTimelinesLeft = options.maximumDetailedTimelines
  }

  public mutating func warn(_ warning: LogWarning) {
    warnings.add(warning)
  }

  public mutating func visit(_ event: consuming LogEvent, at location: LogLocation)
    throws(AnalysisError)
  {
    switch consume event {
    case .sessionBegan(let info):
      state = SessionState(info, maximumExamples: options.maximumExamples)
      censuses.beginSession()
      // A session beyond the listed ones keeps no detail: only its counts reach the report.
      if sessions.count < options.maximumListedSessions {
        state.marksLeft = marksLeft
        state.threadNamesLeft = threadNamesLeft
        state.detailedTimelinesLeft = detailedTimelinesLeft
      }
      inSession = true
    case .record(let record):
      guard inSession else { return }
      if state.pendingCheck != nil, settlePendingCheck(before: record) { return }
      apply(record, line: location.line)
    case .sessionEnded(let ending):
      guard inSession else { return }
      if let pending = state.pendingCheck {
        state.pendingCheck = nil
        applyCheck(pending.check, line: pending.line, holders: nil)
      }
      finishSession(ending)
      inSession = false
      state = SessionState(state.info, maximumExamples: options.maximumExamples)
    }
  }

  public mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    guard inSession else { return }
    if state.pendingCheck != nil, settlePendingCheck(before: .enqueue(record)) { return }
    applyEnqueue(record, line: location.line)
  }

  public mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    guard inSession else { return }
    if state.pendingCheck != nil, settlePendingCheck(before: .release(record)) { return }
    applyRelease(record, line: location.line)
  }

  /// Judges the alive check that waits for its holders record, now that `record` follows it:
  /// with `record`'s holders when it is that record (then `true`: nothing more to do with
  /// it), without them when the check can wait no longer. Out of line: a check waits for a
  /// few records of a log at most.
  @inline(never)
  private mutating func settlePendingCheck(before record: LogRecord) -> Bool {
    guard let pending = state.pendingCheck else { return false }
    if case .holders(let scan) = record, scan.reason == .check,
      Self.scan(scan, follows: pending.check)
    {
      state.pendingCheck = nil
      applyCheck(pending.check, line: pending.line, holders: scan.holders)
      return true
    }
    if mayWaitLonger(for: pending.check, past: record) {
      state.recordsPastPendingCheck += 1
    } else {
      state.pendingCheck = nil
      applyCheck(pending.check, line: pending.line, holders: nil)
    }
    return false
  }

  /// The report, once every input has been read.
  public consuming func finish(inputs: [String]) -> Report {
    if let problems = symbolizer?.problems {
      for problem in problems { warn(LogWarning(.symbolization, at: nil, problem)) }
    }
    let rows = types.sorted { ($0.enqueued, $1.type) > ($1.enqueued, $0.type) }
    let sortedFindings = FindingCollector.sorted(findings.explained())
    var report = Report(
      inputs: inputs, options: options, summary: summary, sessions: sessions,
      omittedSessions: omittedSessions, findings: sortedFindings, checks: checks,
      latency: latency, types: rows, warnings: warnings.kept, omittedWarnings: warnings.omitted,
      peak: peak, hasIncompleteSession: hasIncompleteSession, holders: holders,
      lateHeld: lateHeld.sorted(), omittedLateHeld: lateHeld.omitted)
    report.census = censuses
    return report
  }

  /// Objects the analyzer holds now (in a queue, or survivors of their release): the state
  /// that must not grow with the log's size. A test hook.
  package var trackedObjectCount: Int { state.live.count + state.survivors.count }

  /// Checks and check groups the analyzer holds now, and recent releases: bounded however
  /// many checks and releases a log has. A test hook.
  package var retainedCheckCount: Int { state.checks.retainedCount + state.released.count }

  /// Per-session detail held for the report (sessions, marks, depth points, thread names):
  /// bounded however many sessions the inputs have. A test hook.
  package var retainedSessionDetail: Int {
    sessions.count
      + sessions.reduce(0) { total, session in
        total + session.marks.count + session.threads.count
          + session.queues.reduce(0) { $0 + $1.points.count }
      }
  }

  // MARK: - Records

  /// `consuming`: each kind's payload is moved to its step, not copied (with a retain per
  /// name) and destroyed with the record after.
  private mutating func apply(_ record: consuming LogRecord, line: Int) {
    switch consume record {
    case .stack(let stack):
      state.stacks.define(stack.id, frames: stack.frames)
    case .thread(let thread):
      if state.threads[thread.tid] != nil {
        state.threads[thread.tid] = thread.name
      } else if state.threadNamesLeft > 0 {
        state.threadNamesLeft -= 1
        state.threads[thread.tid] = thread.name
      }
    case .enqueue(let enqueue):
      applyEnqueue(enqueue, line: line)
    case .release(let release):
      applyRelease(release, line: line)
    case .dealloc(let dealloc):
      applyDealloc(dealloc, line: line)
    case .drain(let drain):
      let timeline = state.timeline(drain.queue, id: drain.queueID)
      state.timelines[timeline].drains += 1
      if drain.drainReason == .bound { state.timelines[timeline].boundDrains += 1 }
    case .mark(let mark):
      if state.marksLeft > 0 {
        state.marksLeft -= 1
        state.marks.append(mark)
      } else {
        state.omittedMarks += 1
      }
    case .check(let check):
      if check.alive {
        // Judged at its holders record, or at the next record (see `visit`).
        state.pendingCheck = (check, line)
        state.recordsPastPendingCheck = 0
      } else {
        applyCheck(check, line: line, holders: nil)
      }
    case .holders(var scan):
      if symbolizer != nil { scan.holders = scan.holders.symbolized(with: &symbolizer!) }
      applyHolders(scan)
    case .census(var census):
      for index in census.groups.indices { symbolize(&census.groups[index].allocationStack) }
      censuses.add(census, libraryModules: options.libraryModules)
    case .end, .session, .cut, .unknown:
      break
    }
  }

  private mutating func applyEnqueue(_ r: EnqueueRecord, line: Int) {
    if r.time > state.lastTime { state.lastTime = r.time }
    // An id above every id enqueued so far is in no table: the recorder's ids grow, so the
    // two lookups (cache misses once the tables hold many objects) are skipped for nearly
    // every enqueue.
    if let highest = state.highestEnqueuedID, r.id <= highest,
      state.live.contains(r.id) || state.survivors[r.id] != nil
    {
      inconsistent(line, "enqueue reuses id \(r.id), which is still in use; the record is skipped")
      return
    }
    let (stack, isDefined) = state.stacks.slot(naming: r.stack)
    if !isDefined, let id = r.stack {
      // The recorder writes a stack before the first record that names it; without it the
      // object's frames (and so its finding's signature) are unknown.
      inconsistent(line, "enqueue names stack \(id), which no earlier 'stack' record defines")
    }
    state.highestEnqueuedID = max(state.highestEnqueuedID ?? 0, r.id)
    let type = row(r.type, id: r.typeID)
    let queue = state.timeline(r.queue, id: r.queueID)
    let object = SessionState.Live(
      enqueuedAt: r.time, address: r.object, type: Int32(type), queue: Int32(queue), stack: stack,
      line: line)
    state.live.insert(r.id, object)
    state.enqueued.insert(address: r.object)
    state.counts[type].enqueued += 1
    state.timelines[queue].enqueued += 1
    state.timelines[queue].record(depth: r.depth ?? (state.timelines[queue].depth + 1), at: r.time)
  }

  private mutating func applyRelease(_ r: ReleaseRecord, line: Int) {
    if r.time > state.lastTime { state.lastTime = r.time }
    guard let object = state.live.removeValue(forKey: r.id) else {
      inconsistent(line, "release of id \(r.id), which is not in a queue; the record is skipped")
      return
    }
    let waited = r.time - object.enqueuedAt
    latency.enqueueToRelease.add(waited)
    types[Int(object.type)].enqueueToRelease.add(waited)
    state.timelines[Int(object.queue)].recordRelease(at: r.time)
    switch ObjectLifecycle.release(freed: r.freed) {
    case .freed:
      state.counts[Int(object.type)].freed += 1
    case .survivor:
      state.survivors.insert(
        r.id,
        SessionState.Survivor(
          live: object, releasedAt: r.time, retainCount: r.retainCount, line: line))
    }
    state.released.add(
      r.id,
      RecentReleases.Entry(
        address: object.address, enqueuedAt: object.enqueuedAt, releasedAt: r.time,
        value: SessionState.Released(
          type: object.type, queue: object.queue, stack: object.stack, freed: r.freed,
          retainCount: r.retainCount)),
      now: state.lastTime)
    // Checks of this object read before its release were no false leaks after all when
    // timed at or after it (the queue no longer held the object) or when the release left
    // the object alive (``ObjectLifecycle/isDelayedDealloc(at:)``).
    guard state.checks.follows(r.id) else { return }
    let turned = state.checks.released(
      r.id, at: r.time, freed: r.freed, retainCount: r.retainCount, stack: object.stack,
      facts: facts(id: r.id, object))
    for typeRow in turned { state.counts[typeRow].turnFalseLeakIntoTrueLeak() }
  }

  private mutating func applyDealloc(_ r: DeallocRecord, line: Int) {
    if r.time > state.lastTime { state.lastTime = r.time }
    guard let survivor = state.survivors.remove(r.id) else {
      inconsistent(line, "dealloc of id \(r.id), which did not survive a release; skipped")
      return
    }
    state.counts[Int(survivor.live.type)][ObjectLifecycle.stateAfterDealloc] += 1
    latency.releaseToDealloc.add(r.time - survivor.releasedAt)
    state.released[r.id]?.value.deallocAt = r.time
    state.checks.deallocated(r.id, at: r.time)
    if !state.survivorHolders.isEmpty,
      let holders = state.survivorHolders.removeValue(forKey: r.id)
    {
      addLateHeld(id: r.id, survivor, holders, deallocAt: r.time)
    }
  }

  /// A late object whose holders were scanned at its release: grouped for the report's
  /// section of objects held past their release (never a finding: it was freed).
  private mutating func addLateHeld(
    id: UInt64, _ survivor: SessionState.Survivor, _ holders: HolderReport, deallocAt: Int64
  ) {
    let stack = frames(survivor.live.stack)
    let type = typeName(survivor.live)
    lateHeld.add(
      Signature(type: type, stack: stack, holderKey: holders.groupingKey), stack: stack,
      LateHeldExample(
        session: state.info.index, id: id, address: survivor.live.address, type: type,
        queue: queueName(survivor.live), enqueuedAt: survivor.live.enqueuedAt,
        releasedAt: survivor.releasedAt, deallocAt: deallocAt,
        location: LogLocation(file: state.info.file, line: survivor.line), holders: holders))
  }

  /// The object a check is about, as far as the log has told so far.
  private struct Match {
    var facts: ObjectFacts
    var stack: StackSlot
    /// Still in its queue when the check was read.
    var isLive: Bool
  }

  /// How many records of other threads an alive check may wait past for its `holders`
  /// record: the recorder writes that record right after the check on the checking thread,
  /// but a drain on another thread can put its records in between.
  static let holdersLookahead = 4_096

  /// Whether the pending alive check may still wait for its `holders` record past `record`.
  /// Only in a session recorded with holders (elsewhere no such record comes, and the check
  /// is judged at the next record as before), never past a record about the same object
  /// (its verdict must see the object as the check did) or another check, and only within
  /// ``holdersLookahead``.
  private func mayWaitLonger(for check: CheckRecord, past record: LogRecord) -> Bool {
    guard state.info.record.holders, state.recordsPastPendingCheck < Self.holdersLookahead
    else { return false }
    switch record {
    case .check: return false
    case .enqueue(let enqueue): return enqueue.object != check.object && enqueue.id != check.id
    case .release(let release): return release.id != check.id
    case .dealloc(let dealloc): return dealloc.id != check.id
    case .holders(let scan): return scan.object != check.object
    default: return true
    }
  }

  /// Whether a `holders` record (`why: check`) is about the check just before it: the same
  /// id when both have one, else the same address.
  private static func scan(_ scan: HolderRecord, follows check: CheckRecord) -> Bool {
    if let id = scan.id, let checked = check.id { return id == checked }
    return scan.object == check.object
  }

  /// A survivor takes the latest holders record written while it is alive (`why` release,
  /// then end): the latest says best who holds it now. Matched by id, else by address.
  /// Records about freed or unknown objects (and `check` scans, attached in `visit`) change
  /// nothing.
  /// An allocation stack resolved further with `--symbolize` (file:line); unchanged
  /// without a symbolizer or a stack.
  private mutating func symbolize(_ allocationStack: inout [Frame]) {
    guard symbolizer != nil, !allocationStack.isEmpty else { return }
    allocationStack = symbolizer!.symbolize(allocationStack)
  }

  private mutating func applyHolders(_ scan: HolderRecord) {
    if scan.time > state.lastTime { state.lastTime = scan.time }
    guard scan.reason != .check else { return }
    guard let id = scan.id ?? state.survivors.id(at: scan.object), state.survivors[id] != nil
    else { return }
    state.survivorHolders[id] = scan.holders
  }

  private mutating func applyCheck(_ check: CheckRecord, line: Int, holders: HolderReport?) {
    if check.time > state.lastTime { state.lastTime = check.time }
    state.checkRecords += 1
    guard check.alive else { return }
    let typeRow = row(check.type, id: check.typeID)
    if check.id == nil { state.live.indexAddresses() }
    // One match of the optional: tested and read field by field, it was copied whole (a
    // `memcpy` of its facts) at each use.
    var entry: CheckLedger.Entry
    let objectInQueue: Bool
    switch self.match(check) {
    case let match?:
      entry = CheckLedger.Entry(
        verdict: match.facts.lifecycle.verdict(ofCheckAt: check.time), check: check, line: line,
        facts: match.facts,
        stack: match.stack, typeRow: typeRow, holders: holders)
      objectInQueue = match.isLive
    case nil:
      entry = CheckLedger.Entry(
        verdict: ObjectLifecycle.verdict(ofCheckAt: check.time, of: nil), check: check,
        line: line, facts: nil, stack: .noStack, typeRow: typeRow,
        holders: holders)
      // The recorder gives a check an id only for an object it saw enqueued.
      entry.neverEnqueued = check.id == nil && !state.enqueued.mayContain(address: check.object)
      objectInQueue = false
    }
    state.counts[typeRow].count(entry.verdict)
    entry.listed = checks.count + state.checks.listedCount < options.maximumListedChecks
    state.checks.record(entry, objectInQueue: objectInQueue)
  }

  /// The object `check` is about (``SessionObjects/object(checkedBy:)``), with what the log
  /// has told of it so far.
  private func match(_ check: CheckRecord) -> Match? {
    switch state.object(checkedBy: check) {
    case nil:
      return nil
    case .queued(let id, let object):
      return Match(facts: facts(id: id, object), stack: object.stack, isLive: true)
    case .survivor(let id, let survivor):
      var facts = self.facts(id: id, survivor.live)
      facts.lifecycle.recordRelease(
        at: survivor.releasedAt, freed: false, retainCount: survivor.retainCount)
      return Match(facts: facts, stack: survivor.live.stack, isLive: false)
    case .released(let id, let entry):
      let released = entry.value
      var facts = ObjectFacts(
        id: id, address: entry.address, type: types[Int(released.type)].type,
        queue: state.timelines[Int(released.queue)].queue, enqueuedAt: entry.enqueuedAt,
        enqueuedBy: nil)
      facts.lifecycle.recordRelease(
        at: entry.releasedAt, freed: released.freed, retainCount: released.retainCount)
      if let deallocAt = released.deallocAt { facts.lifecycle.recordDealloc(at: deallocAt) }
      return Match(facts: facts, stack: released.stack, isLive: false)
    }
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

  /// The index of `type`'s row, created on first use, with room for its counts in the
  /// session.
  private mutating func row(_ type: String, id: NameID) -> Int {
    let index = typeRow(type, id: id)
    state.countsUsed(byType: index)
    return index
  }

  /// The index of `type`'s row, created on first use.
  private mutating func typeRow(_ type: String, id: NameID) -> Int {
    let (index, isNew) = typeIndex.row(type, id: id)
    if isNew { types.append(TypeRow(type: type)) }
    return index
  }

  private mutating func inconsistent(_ line: Int, _ message: String) {
    warn(
      LogWarning(
        .inconsistentRecord, at: LogLocation(file: state.info.file, line: line), message))
  }

  // MARK: - Session end

  /// The stack's frames, symbolized once per session.
  private mutating func frames(_ stack: StackSlot) -> [Frame] {
    guard let raw = state.stacks.frames(of: stack) else { return [] }
    if let done = state.stacks.symbolizedFrames(of: stack) { return done }
    let resolved = symbolizer?.symbolize(raw) ?? raw
    state.stacks.keepSymbolized(resolved, of: stack)
    return resolved
  }

  /// Adds `object` to the finding of `kind` from its type, stack and `holderKey`, the
  /// origin made on its first member (``FindingCollector/addMember(_:originID:holders:_:)``
  /// for every later one).
  private mutating func addFinding(
    _ kind: Finding.Kind, _ object: SessionState.Live, holderKey: String? = nil,
    holders: HolderReport? = nil, checks: Int = 0,
    _ example: @autoclosure () -> FindingExample
  ) {
    let type = Int(object.type)
    if let originID = state.origins.knownID(type: type, stack: object.stack, holderKey: holderKey),
      findings.addMember(kind, originID: originID, holders: holders, checks: checks, example())
    {
      return
    }
    findings.add(
      kind, origin(type: type, stack: object.stack, holderKey: holderKey), holders: holders,
      checks: checks, example())
  }

  /// The signature and finding keys of type row `type`, `stack` and `holderKey`, once per
  /// distinct triple of the session.
  private mutating func origin(type: Int, stack: StackSlot, holderKey: String? = nil)
    -> FindingOrigin
  {
    if let known = state.origins.known(type: type, stack: stack, holderKey: holderKey) {
      return known
    }
    let frames = frames(stack)
    return state.origins.origin(
      type: type, typeName: types[type].type, stack: stack, holderKey: holderKey, frames: frames)
  }

  private mutating func finishSession(_ ending: SessionEnding) {
    let end = EndOfSession(ending, stuckAfter: options.stuckAfter)
    finishSurvivors(end)
    finishQueuedObjects(end)
    finishWatchedQueuedObjects(end)
    finishChecks(lastTime: end.lastTime, ended: end.ended)
    findings.forgetOrigins()

    if !end.ended || ending.truncated || ending.cut != nil { hasIncompleteSession = true }
    countHolderScans(ending)
    for timeline in state.timelines where timeline.peakDepth > 0 {
      let candidate = QueuePeak(
        queue: timeline.queue, session: state.info.index, depth: timeline.peakDepth,
        at: timeline.peakTime)
      if peak.map({ candidate.isDeeper(than: $0) }) ?? true { peak = candidate }
    }
    let sessionSummary = state.summary
    for (type, counts) in state.counts.enumerated() { types[type].counts.add(counts) }
    listSession(ending, summary: sessionSummary)
    summary.add(sessionSummary)
  }

  /// Counts the objects the queue released that were never deallocated, and groups them
  /// as leaked findings, in log order.
  private mutating func finishSurvivors(_ end: EndOfSession) {
    let (session, file) = (state.info.index, state.info.file)
    let (types, timelines) = (self.types, state.timelines)
    let (survivors, survivorHolders) = (state.survivors, state.survivorHolders)
    for position in survivors.positions(inOrderOf: \.line) {
      let (id, survivor) = survivors.survivor(at: position)
      let objectState = end.state(ofOpenObjectEnqueuedAt: survivor.enqueuedAt, released: true)
      state.counts[Int(survivor.live.type)][objectState] += 1
      // Its true-leak checks are facts of this one finding, not a finding of their own; their
      // holders serve when no scan at its release or end named any.
      let checked = state.checks.takeChecks(of: id)
      let holders = (survivorHolders.isEmpty ? nil : survivorHolders[id]) ?? checked?.holders
      for (row, count) in checked?.typeRows ?? [] { state.counts[row].trueLeaksOfLeaked += count }
      addFinding(
        .leaked, survivor.live, holderKey: holders?.groupingKey, holders: holders,
        checks: checked?.count ?? 0,
        FindingExample(
          session: session, id: id, address: survivor.live.address,
          type: types[Int(survivor.live.type)].type,
          queue: timelines[Int(survivor.live.queue)].queue, enqueuedAt: survivor.live.enqueuedAt,
          releasedAt: survivor.releasedAt, retainCount: survivor.retainCount,
          checkedAt: checked?.first.time, checkLabel: checked?.first.label,
          location: LogLocation(file: file, line: survivor.line), holders: holders))
      state.checks.finished(id, in: objectState)
    }
  }

  /// Counts the objects still in a queue, in log order, as pending, stuck or never
  /// released, and groups the stuck and never-released ones as findings.
  ///
  /// A session may leave a million objects in its queues and a few hundred (stack, type)
  /// pairs among them, so each pair's origin id is kept in an array by (stack slot, type row)
  /// when that array is small enough (``AnalysisOptions/originTableLimit``): a read per
  /// object instead of two dictionary lookups. Either way each object joins what ``addFinding(_:_:holderKey:holders:_:)``
  /// would have given it.
  private mutating func finishQueuedObjects(_ end: EndOfSession) {
    let live = state.live
    let typeCount = types.count
    let pairCount = (state.stacks.count + 1) * typeCount
    var originIDs = [Int32](
      repeating: -1, count: pairCount <= options.originTableLimit ? pairCount : 0)
    // The example reads copies, not `self`, whose findings change meanwhile.
    let (types, timelines, info) = (self.types, state.timelines, state.info)
    func example(_ id: UInt64, _ object: SessionState.Live) -> FindingExample {
      FindingExample(
        session: info.index, id: id, address: object.address, type: types[Int(object.type)].type,
        queue: timelines[Int(object.queue)].queue, enqueuedAt: object.enqueuedAt,
        age: end.lastTime - object.enqueuedAt,
        location: LogLocation(file: info.file, line: object.line))
    }
    for position in 0..<live.storageCount {
      guard let (id, object) = live.object(at: position) else { continue }
      let objectState = end.state(ofOpenObjectEnqueuedAt: object.enqueuedAt, released: false)
      let type = Int(object.type)
      state.counts[type][objectState] += 1
      let kind: Finding.Kind
      switch objectState {
      case .stuck: kind = .stuck
      case .neverReleased: kind = .neverReleased
      default: continue
      }
      let pair = originIDs.isEmpty ? -1 : object.stack.denseIndex * typeCount + type
      if pair >= 0, originIDs[pair] >= 0,
        findings.addMember(kind, originID: Int(originIDs[pair]), example(id, object))
      {
        continue
      }
      if pair < 0 {
        addFinding(kind, object, example(id, object))
        continue
      }
      let origin = self.origin(type: type, stack: object.stack)
      originIDs[pair] = Int32(origin.id)
      findings.add(kind, origin, example(id, object))
    }
  }

  /// Tells the kept checks of objects still in a queue how those objects ended: only the
  /// objects the checks watch are looked up, not every object still in a queue.
  private mutating func finishWatchedQueuedObjects(_ end: EndOfSession) {
    for id in state.checks.watchedIDs {
      guard let object = state.live[id] else { continue }
      state.checks.finished(
        id, in: end.state(ofOpenObjectEnqueuedAt: object.enqueuedAt, released: false))
    }
  }

  /// Adds the session's holder scans, or counts it as recorded without holders.
  private mutating func countHolderScans(_ ending: SessionEnding) {
    if state.info.record.holders {
      holders.recordedSessions += 1
      holders.scans += ending.end?.holderScans ?? 0
      holders.skippedScans += ending.end?.holderScansSkipped ?? 0
    } else {
      holders.sessionsWithout += 1
    }
  }

  /// Lists the session in the report while fewer than the maximum are listed, handing its
  /// unspent detail budgets (marks, thread names, timelines) on to the next; else counts it
  /// as omitted.
  private mutating func listSession(_ ending: SessionEnding, summary sessionSummary: Summary) {
    guard sessions.count < options.maximumListedSessions else {
      omittedSessions += 1
      return
    }
    marksLeft = state.marksLeft
    threadNamesLeft = state.threadNamesLeft
    detailedTimelinesLeft = state.detailedTimelinesLeft
    sessions.append(
      SessionReport(
        index: state.info.index, file: state.info.file, line: state.info.line,
        header: state.info.record, end: ending.end, truncated: ending.truncated,
        lastTime: ending.lastTime, summary: sessionSummary, unknownKinds: ending.unknownKinds,
        malformedLines: ending.malformedLines, queues: state.timelines, marks: state.marks,
        omittedMarks: state.omittedMarks, threads: state.threads))
  }

  /// Explains the session's kept checks, lists the first ones, and groups the true leaks:
  /// every group's examples in log order first (so that each finding's examples are its
  /// first members), then the members beyond the examples, by count.
  private mutating func finishChecks(lastTime: Int64, ended: Bool) {
    let ledger = state.checks
    var examples: [(line: Int, entry: Int)] = []
    for group in ledger.groups {
      for entry in group.examples { examples.append((ledger.entries[entry].line, entry)) }
    }
    examples.sort { ($0.line, $0.entry) < ($1.line, $1.entry) }
    for (_, index) in examples {
      let entry = ledger.entries[index]
      let origin = self.origin(type: entry.typeRow, stack: entry.stack)
      let session = state.info
      findings.add(
        .trueLeak,
        self.origin(
          type: entry.typeRow, stack: entry.stack, holderKey: entry.holders?.groupingKey),
        holders: entry.holders,
        FindingExample(
          session: session.index, id: entry.facts?.id, address: entry.check.object,
          type: entry.check.type, queue: entry.facts?.queue, enqueuedAt: entry.facts?.enqueuedAt,
          releasedAt: entry.facts?.releasedAt, retainCount: entry.facts?.retainCountAfterRelease,
          checkedAt: entry.check.time, checkLabel: entry.check.label,
          location: LogLocation(file: session.file, line: entry.line), holders: entry.holders),
        verdict: Self.verdict(entry, origin, in: session, lastTime: lastTime, ended: ended))
    }
    for group in ledger.groups where group.count > group.examples.count {
      // The group's key: its examples may all have joined a leaked finding (``finishSurvivors(_:)``).
      findings.add(
        .trueLeak,
        origin(type: group.key.type, stack: group.key.stack, holderKey: group.key.holderKey),
        members: group.count - group.examples.count)
    }
    for entry in ledger.listed where checks.count < options.maximumListedChecks {
      let origin = self.origin(type: entry.typeRow, stack: entry.stack)
      checks.append(Self.verdict(entry, origin, in: state.info, lastTime: lastTime, ended: ended))
    }
  }

  /// A check's verdict; `origin` is its object's (the check's type, the object's stack).
  private static func verdict(
    _ entry: CheckLedger.Entry, _ origin: FindingOrigin, in session: SessionInfo,
    lastTime: Int64, ended: Bool
  ) -> CheckVerdict {
    var facts = entry.facts
    if facts != nil {
      // The signature's frames do not depend on the type.
      facts!.enqueuedBy = origin.signature.frames.first
    }
    return CheckVerdict(
      verdict: entry.verdict, session: session.index, check: entry.check,
      location: LogLocation(file: session.file, line: entry.line), object: facts,
      explanation: Explanations.check(
        entry.verdict, entry.check, facts, sessionEnd: lastTime, ended: ended,
        neverEnqueued: entry.neverEnqueued, callerName: origin.callerName),
      holders: entry.holders)
  }
}
