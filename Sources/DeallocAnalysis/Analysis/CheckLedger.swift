import DeallocLog

/// The alive checks of one session, as the analyzer keeps them until the session ends.
///
/// Why a ledger rather than a list of every check: a session can hold any number of checks,
/// and memory must not grow with them. It keeps, in bounded memory:
/// - the listed checks (the report's first ``AnalysisOptions/maximumListedChecks``), in full;
/// - per true-leak group (the check's type and its object's enqueue stack, which decide the
///   finding it joins), a count and its first ``maximumExamples`` checks in log order, which
///   become the finding's examples;
/// - per object still in its queue, up to ``provisionalPerObject`` of its other false-leak
///   checks: the object's release, once read, can still turn them into true leaks, because a
///   release timed before a check can reach the file after it.
///
/// Kept checks follow their object (release, dealloc, final state), so that their explanation
/// tells the whole story at the session's end.
struct CheckLedger {
  /// One kept check.
  struct Entry {
    var verdict: CheckVerdict.Verdict
    var check: CheckRecord
    var line: Int
    /// The object the check was matched with.
    var facts: ObjectFacts?
    /// The matched object's enqueue stack.
    var stack: StackSlot
    /// The analyzer's type row of the check's type.
    var typeRow: Int
    /// For a check that matched no object: the session certainly never enqueued its address
    /// (and the check has no id, which only enqueued objects get).
    var neverEnqueued = false
    /// Among the report's listed checks.
    var listed = false
    /// Who held the object, from the `holders` record that followed the check.
    var holders: HolderReport?
    /// Among its true-leak group's examples.
    fileprivate(set) var isExample = false
  }

  /// What a true-leak check is grouped by before its stack is symbolized.
  struct GroupKey: Hashable {
    var type: Int
    var stack: StackSlot
    /// The holder path's grouping key, when the check has a holders record.
    var holderKey: String?
  }

  /// The true leaks of one key.
  struct Group {
    var key: GroupKey
    var count = 0
    /// Indices into ``entries``, in log order.
    var examples: [Int] = []
  }

  /// A false leak of an object still in its queue, neither listed nor an example.
  private struct Provisional {
    var check: CheckRecord
    var line: Int
    var typeRow: Int
  }

  /// False leaks kept per queued object for judging again at its release; beyond, the ones
  /// timed earliest stay false leaks without a second look (they are the least likely to
  /// follow the release).
  static let provisionalPerObject = 64

  let maximumExamples: Int
  /// Kept checks; some slots are free (listed in `freeSlots`).
  private(set) var entries: [Entry] = []
  private var freeSlots: [Int] = []
  /// The kept checks of each object, by object id.
  private var watched: [UInt64: [Int]] = [:]
  private var provisional: [UInt64: [Provisional]] = [:]
  private var provisionalCount = 0
  /// True-leak groups in order of first appearance.
  private(set) var groups: [Group] = []
  private var groupIndex: [GroupKey: Int] = [:]
  /// Listed checks of the session.
  private(set) var listedCount = 0
  /// The true-leak checks of each object that survived its release and is not yet
  /// deallocated, by object id: if the session ends with the object still alive, it is a
  /// leaked object, and these checks are facts of its one finding (``takeChecks(of:)``), not
  /// a second finding. Bounded by the survivors the analyzer holds anyway.
  private var checksOfSurvivors: [UInt64: SurvivorChecks] = [:]

  /// The true-leak checks of one survivor of its release.
  struct SurvivorChecks {
    /// Checks per true-leak group (index into ``groups``).
    var perGroup: [Int: Int] = [:]
    /// The first check in log order, and its line.
    var first: CheckRecord
    var line: Int
    /// The holders of the first check that has a holders record.
    var holders: HolderReport?
    var count: Int { perGroup.values.reduce(0, +) }
  }

  init(maximumExamples: Int) {
    self.maximumExamples = max(1, maximumExamples)
  }

  /// Checks and groups held now: what must stay bounded however many checks a log has.
  var retainedCount: Int {
    entries.count - freeSlots.count + provisionalCount + groups.count
  }

  /// The listed checks, in log order.
  var listed: [Entry] {
    entries.filter(\.listed).sorted { $0.line < $1.line }
  }

  /// Records a judged check. `objectInQueue`: the check was matched with an object that is
  /// still in its queue, so a false leak may yet turn into a true leak at its release.
  mutating func record(_ entry: Entry, objectInQueue: Bool) {
    var stored: Int?
    if entry.listed {
      stored = store(entry)
      listedCount += 1
    }
    switch entry.verdict {
    case .trueLeak:
      countTrueLeak(entry, stored: stored)
    case .falseLeak:
      if stored == nil, objectInQueue, let id = entry.facts?.id {
        keepProvisional(entry, of: id)
      }
    }
  }

  /// Whether the ledger keeps checks of object `id`: the release of every object asks, so
  /// it copies no array of entries.
  func follows(_ id: UInt64) -> Bool {
    (!watched.isEmpty && watched.index(forKey: id) != nil)
      || (!provisional.isEmpty && provisional.index(forKey: id) != nil)
  }

  /// Object `id` was released at `t`: completes the facts of its kept checks, and turns its
  /// false leaks timed at or after `t`, or all of them when the release did not free it,
  /// into true leaks. Returns the type rows of the checks
  /// that turned, for the analyzer's counts (it counted them as false leaks when they were
  /// read). `facts` describes the object as enqueued.
  mutating func released(
    _ id: UInt64, at t: Int64, freed: Bool, retainCount: Int?, stack: StackSlot,
    facts: ObjectFacts
  ) -> [Int] {
    var turned: [Int] = []
    if !watched.isEmpty, let indices = watched[id] {
      for index in indices {
        entries[index].facts?.lifecycle.recordRelease(
          at: t, freed: freed, retainCount: retainCount)
        guard entries[index].verdict == .falseLeak,
          ObjectLifecycle.verdict(
            ofCheckAt: entries[index].check.time, of: entries[index].facts?.lifecycle)
            == .trueLeak
        else { continue }
        entries[index].verdict = .trueLeak
        turned.append(entries[index].typeRow)
        countTrueLeak(entries[index], stored: index)
      }
    }
    if !provisional.isEmpty, let kept = provisional.removeValue(forKey: id) {
      provisionalCount -= kept.count
      var object = facts
      object.lifecycle.recordRelease(at: t, freed: freed, retainCount: retainCount)
      // Each was kept because the object had been enqueued at or before it, so it was in
      // the queue unless it came at or after the release; a release that left the object
      // alive turns them all.
      for check in kept where object.lifecycle.verdict(ofCheckAt: check.check.time) == .trueLeak {
        turned.append(check.typeRow)
        countTrueLeak(
          Entry(
            verdict: .trueLeak, check: check.check, line: check.line, facts: object, stack: stack,
            typeRow: check.typeRow), stored: nil)
      }
    }
    return turned
  }

  /// Object `id`, a survivor of its release, was deallocated at `t`.
  mutating func deallocated(_ id: UInt64, at t: Int64) {
    if !checksOfSurvivors.isEmpty { checksOfSurvivors[id] = nil }
    guard !watched.isEmpty, let indices = watched[id] else { return }
    for index in indices { entries[index].facts?.lifecycle.recordDealloc(at: t) }
  }

  /// The objects whose kept checks learn how they ended (``finished(_:in:)``), in no
  /// particular order: a few per kept check, where a session may leave a million objects in
  /// its queues.
  var watchedIDs: [UInt64] { Array(watched.keys) }

  /// Object `id` ended the session in `state`.
  mutating func finished(_ id: UInt64, in state: ObjectState) {
    guard !watched.isEmpty, let indices = watched[id] else { return }
    for index in indices { entries[index].facts?.state = state }
  }

  /// Takes the true-leak checks of object `id`, which ended the session leaked after its
  /// release, out of their groups: they join the object's leaked finding instead of making
  /// a second finding of the same bug. Returns them (`nil` when it had none): the first, how
  /// many, the first holders record of one, and the type row of each group's checks, for
  /// the counts.
  mutating func takeChecks(of id: UInt64) -> (
    first: CheckRecord, count: Int, holders: HolderReport?, typeRows: [(row: Int, count: Int)]
  )? {
    guard !checksOfSurvivors.isEmpty, let taken = checksOfSurvivors.removeValue(forKey: id)
    else { return nil }
    var typeRows: [(row: Int, count: Int)] = []
    for (group, count) in taken.perGroup.sorted(by: { $0.key < $1.key }) {
      groups[group].count -= count
      typeRows.append((groups[group].key.type, count))
      let (taken, kept) = groups[group].examples.reduce(into: ([Int](), [Int]())) {
        if entries[$1].facts?.id == id { $0.0.append($1) } else { $0.1.append($1) }
      }
      groups[group].examples = kept
      for index in taken {
        entries[index].isExample = false
        releaseIfUnused(index)
      }
    }
    return (taken.first, taken.count, taken.holders, typeRows)
  }

  // MARK: - Storage

  private mutating func countTrueLeak(_ entry: Entry, stored: Int?) {
    let key = GroupKey(
      type: entry.typeRow, stack: entry.stack, holderKey: entry.holders?.groupingKey)
    let group: Int
    if let known = groupIndex[key] {
      group = known
    } else {
      group = groups.count
      groups.append(Group(key: key))
      groupIndex[key] = group
    }
    groups[group].count += 1
    if let facts = entry.facts, facts.lifecycle.isSurvivor {
      checksOfSurvivors[facts.id, default: SurvivorChecks(first: entry.check, line: entry.line)]
        .perGroup[group, default: 0] += 1
      if entry.line < checksOfSurvivors[facts.id]!.line {
        checksOfSurvivors[facts.id]!.first = entry.check
        checksOfSurvivors[facts.id]!.line = entry.line
      }
      if checksOfSurvivors[facts.id]!.holders == nil {
        checksOfSurvivors[facts.id]!.holders = entry.holders
      }
    }
    if groups[group].examples.count >= maximumExamples {
      // Full: the check displaces the last example only when it comes earlier in the log.
      guard let last = groups[group].examples.last, entries[last].line > entry.line else { return }
      groups[group].examples.removeLast()
      entries[last].isExample = false
      releaseIfUnused(last)
    }
    let index = stored ?? store(entry)
    entries[index].isExample = true
    let position =
      groups[group].examples.firstIndex { entries[$0].line > entry.line }
      ?? groups[group].examples.count
    groups[group].examples.insert(index, at: position)
  }

  private mutating func keepProvisional(_ entry: Entry, of id: UInt64) {
    let check = Provisional(check: entry.check, line: entry.line, typeRow: entry.typeRow)
    var kept = provisional.removeValue(forKey: id) ?? []
    if kept.count < Self.provisionalPerObject {
      kept.append(check)
      provisionalCount += 1
    } else if let earliest = kept.indices.min(by: { kept[$0].check.time < kept[$1].check.time }),
      kept[earliest].check.time < check.check.time
    {
      kept[earliest] = check
    }
    provisional[id] = kept
  }

  private mutating func store(_ entry: Entry) -> Int {
    let index: Int
    if let free = freeSlots.popLast() {
      entries[free] = entry
      index = free
    } else {
      entries.append(entry)
      index = entries.count - 1
    }
    if let id = entry.facts?.id {
      watched[id, default: []].append(index)
    }
    return index
  }

  private mutating func releaseIfUnused(_ index: Int) {
    guard !entries[index].listed, !entries[index].isExample else { return }
    if let id = entries[index].facts?.id {
      let others = (watched[id] ?? []).filter { $0 != index }
      watched[id] = others.isEmpty ? nil : others
    }
    freeSlots.append(index)
  }
}
