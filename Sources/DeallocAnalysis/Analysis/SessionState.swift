import DeallocLog

/// What the analyzer keeps while a session is being read: the objects still in a queue, the
/// survivors of their release, recent releases, the session's stacks, queues and checks.
/// Dropped at the session's end.
///
/// Objects refer to their type and queue by index, so that the per-object tables hold no
/// strings (no reference counting on the hot path).
struct SessionState {
  /// An object enqueued and not yet released.
  struct Live: QueuedObject {
    var enqueuedAt: Int64
    var address: Address
    /// Index into the analyzer's type rows.
    var type: Int32
    /// Index into ``SessionState/timelines``.
    var queue: Int32
    /// The enqueue's stack in ``SessionState/stacks``.
    var stack: StackSlot
    var line: Int
  }

  /// An object released with `freed: false` and not yet deallocated: plain data (its
  /// holders record, when one came, is in ``survivorHolders``).
  struct Survivor: SurvivingObject {
    var live: Live
    var releasedAt: Int64
    var retainCount: Int?
    var line: Int

    var address: Address { live.address }
    var enqueuedAt: Int64 { live.enqueuedAt }
  }

  /// What a released object leaves in ``SessionState/released``: every release writes one
  /// into the ring, so its optionals are packed (``PackedOptionals``) and its stack is a
  /// slot.
  struct Released: ReleasedObject {
    var type: Int32
    var queue: Int32
    let stack: StackSlot
    private var present: PackedOptionals
    private var retainCountValue = 0
    private var deallocAtValue: Int64 = 0
    private static let retainCountBit: UInt8 = 2
    private static let deallocAtBit: UInt8 = 4
    private static let freedBit: UInt8 = 8

    init(type: Int32, queue: Int32, stack: StackSlot, freed: Bool, retainCount: Int?) {
      self.type = type
      self.queue = queue
      self.stack = stack
      retainCountValue = retainCount ?? 0
      present = PackedOptionals(
        bits: (retainCount == nil ? 0 : Self.retainCountBit) | (freed ? Self.freedBit : 0))
    }

    var freed: Bool { present.flag(Self.freedBit) }
    var retainCount: Int? { present.value(retainCountValue, bit: Self.retainCountBit) }
    var deallocAt: Int64? {
      get { present.value(deallocAtValue, bit: Self.deallocAtBit) }
      set { present.store(newValue, bit: Self.deallocAtBit, in: &deallocAtValue) }
    }
  }

  var info: SessionInfo
  /// The session's stacks: every table below keeps a stack as its slot here.
  var stacks = StackSlots()
  var threads: [Int64: String] = [:]
  /// Objects in a queue, by id and by address (the latest enqueue of each address).
  var live = LiveObjects()
  var survivors = Survivors<Survivor>()
  /// The latest holders record of a survivor while it was alive (`why` release or end), by
  /// id. Why apart from ``Survivor``: few sessions record holders, and as a field it made
  /// every survivor half as big again, with a reference-counted array to copy, where a
  /// leak-heavy log keeps tens of thousands of survivors.
  var survivorHolders: [UInt64: HolderReport] = [:]
  /// Timelines in order of first appearance, and their index by queue name.
  var timelines: [QueueTimeline] = []
  private var queueRows = NameRows()
  /// The session's counts by type row (the analyzer's), the source of its summary and of the
  /// report's per-type rows; ``countsUsed(byType:)`` makes room for a row.
  var counts: [LifecycleCounts] = []
  /// Every `check` record, alive or not.
  var checkRecords = 0
  var marks: [MarkRecord] = []
  var omittedMarks = 0
  /// Marks this session may still keep (the report's budget, shared by its sessions).
  var marksLeft = 0
  /// Thread names this session may still keep.
  var threadNamesLeft = 0
  /// Timelines of this session that may still keep a depth series.
  var detailedTimelinesLeft = 0
  /// The alive checks, until the session ends.
  var checks: CheckLedger
  /// Released objects, for checks written after a release they precede.
  var released = RecentReleases<Released>()
  /// Every address and id enqueued, to tell "never enqueued" apart in explanations.
  var enqueued = EnqueueFilter()
  /// Signatures and finding keys, once per distinct type and stack.
  var origins = FindingOrigins()
  /// An alive check read but not yet judged: the `holders` record that follows it (when
  /// the recorder scanned for its object) is attached first. See ``Analyzer``.
  var pendingCheck: (check: CheckRecord, line: Int)?
  /// How many records the pending check has waited past (``Analyzer/holdersLookahead``).
  var recordsPastPendingCheck = 0
  /// The largest id of an enqueue applied so far: larger ids are in no table.
  var highestEnqueuedID: UInt64?
  /// The largest `t` read so far.
  var lastTime: Int64 = 0

  init(_ info: SessionInfo, maximumExamples: Int = 5) {
    self.info = info
    self.checks = CheckLedger(maximumExamples: maximumExamples)
  }

  /// Makes room for the counts of type row `type`: call it for the row of every enqueue and
  /// alive check, before counting (the other records count an object or check seen so).
  mutating func countsUsed(byType type: Int) {
    if type >= counts.count {
      counts.append(contentsOf: repeatElement(LifecycleCounts(), count: type + 1 - counts.count))
    }
  }

  /// The session's summary: the sum of its counts.
  var summary: Summary {
    var total = LifecycleCounts()
    for typeCounts in counts { total.add(typeCounts) }
    return Summary(session: total, checks: checkRecords)
  }

  /// The index of `queue`'s timeline (whose id is `id`), created on first use.
  mutating func timeline(_ queue: String, id: NameID) -> Int {
    let (row, isNew) = queueRows.row(queue, id: id)
    guard isNew else { return row }
    var timeline = QueueTimeline(queue: queue, session: info.index)
    if detailedTimelinesLeft > 0 {
      detailedTimelinesLeft -= 1
    } else {
      timeline.keepsPoints = false
    }
    timelines.append(timeline)
    return row
  }
}

extension SessionState: SessionObjects {
  func queued(_ id: UInt64) -> Live? { live[id] }

  func latestQueuedID(at address: Address) -> UInt64? { live.latestID(at: address.rawValue) }
}
