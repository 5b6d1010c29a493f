import DeallocLog

/// Everything the log says about one object: the input of `dealloctrace explain`.
public struct ObjectHistory: Sendable, Equatable {
  /// One record about the object, or about its queue while it waited (drains).
  public struct Entry: Sendable, Equatable {
    public var record: LogRecord
    public var location: LogLocation
    /// For `check` records: the verdict (alive checks only).
    public var verdict: CheckVerdict.Verdict?
  }

  public var session: SessionInfo
  /// `nil` for an object only a check saw (never enqueued).
  public var id: UInt64?
  public var address: Address
  public var type: String
  public var queue: String?
  /// The records in log order, up to ``ObjectHistoryCollector/maximumEntries``: the enqueue,
  /// release and dealloc always, drains, checks and holders records while there is room.
  public var entries: [Entry] = []
  /// Drains and checks beyond the cap, counted but not kept.
  public var omittedEntries = 0
  /// The enqueue stack, symbolized when a symbolizer was given.
  public var stack: [Frame] = []
  /// The final state; `nil` for an object that was never enqueued.
  public var state: ObjectState?
  /// What the log said of the object's life; `nil` for an object that was never enqueued.
  var lifecycle: ObjectLifecycle?
  public var enqueuedAt: Int64? { lifecycle?.enqueuedAt }
  public var releasedAt: Int64? { lifecycle?.releasedAt }
  public var deallocAt: Int64? { lifecycle?.deallocAt }
  /// The session's last time (for the age of unreleased objects).
  public var sessionLastTime: Int64 = 0
  /// Thread names of the session, for readable entries.
  public var threads: [Int64: String] = [:]
}

/// What `explain` looks for.
public enum ObjectSelector: Sendable, Equatable, CustomStringConvertible {
  /// An object id (ids are per session: every session's object with that id).
  case id(UInt64)
  /// Every object that had this address, and every check of it.
  case address(Address)
  /// Every object of this type (the fully qualified name, or its last component).
  case type(String)
  /// The members of the finding with this id that its report kept as examples.
  case finding(FindingID, members: FindingMembers)

  /// Reads a selector: `0x…` is an address, digits an id, anything else a type name.
  public init(_ text: String) {
    if text.hasPrefix("0x"), let value = UInt64(text.dropFirst(2), radix: 16) {
      self = .address(Address(value))
    } else if let value = UInt64(text) {
      self = .id(value)
    } else {
      self = .type(text)
    }
  }

  public var description: String {
    switch self {
    case .id(let id): return "id \(id)"
    case .address(let address): return "address \(address)"
    case .type(let type): return "type \(type)"
    case .finding(let id, _): return "finding id:\(id)"
    }
  }

  /// The finding id in `text`, as the outputs print it: `id:` and 12 hex digits, or the 12
  /// digits alone when one of them is a letter (12 decimal digits alone read as an object id).
  public static func findingID(in text: String) -> FindingID? {
    if text.hasPrefix("id:") { return FindingID(parsing: String(text.dropFirst(3))) }
    guard text.utf8.contains(where: { !(0x30...0x39).contains($0) }) else { return nil }
    return FindingID(parsing: text)
  }

  func matches(type candidate: String) -> Bool {
    guard case .type(let wanted) = self else { return false }
    return candidate == wanted || candidate.hasSuffix("." + wanted)
  }
}

/// The objects of one finding that `explain` looks for: those enqueued, by session and id,
/// and those only a check saw (a true leak never handed to a queue), by session and address.
public struct FindingMembers: Sendable, Equatable {
  struct Key<Value: Hashable & Sendable>: Hashable, Sendable {
    var session: Int
    var value: Value
    init(_ session: Int, _ value: Value) {
      self.session = session
      self.value = value
    }
  }
  var ids: Set<Key<UInt64>> = []
  var addresses: Set<Key<Address>> = []

  /// The examples `finding` keeps (its report's cap applies: the rest are counted apart).
  public init(_ finding: Finding) {
    for example in finding.examples {
      if let id = example.id {
        ids.insert(Key(example.session, id))
      } else {
        addresses.insert(Key(example.session, example.address))
      }
    }
  }
}

/// A visitor that collects the ``ObjectHistory`` of every object a selector matches.
///
/// Memory grows with the matched objects only (capped at ``maximumObjects``; the rest are
/// counted), each with at most ``maximumEntries`` records, and with the session's distinct
/// stacks.
///
/// A check's verdict follows the log contract by `t`, with the rule the report uses
/// (``QueueMembership``): it is settled at the session's end, once the object's release is
/// known, so that records written slightly out of time order do not change it.
public struct ObjectHistoryCollector: LogVisitor {
  public let selector: ObjectSelector
  public var maximumObjects = 1000
  /// Records kept per object: a queue that drains often, or a check in a loop, must not grow
  /// one history without bound. The enqueue, release and dealloc are always kept.
  public var maximumEntries = 500
  public var stuckAfter: Int64
  public private(set) var histories: [ObjectHistory] = []
  public private(set) var omitted = 0
  /// Problems in the input (kept up to 200; the rest counted in ``omittedWarnings``).
  public var warnings: [LogWarning] { capped.kept }
  public var omittedWarnings: Int { capped.omitted }
  private var capped = CappedWarnings(limit: 200)
  private var symbolizer: (any FrameSymbolizer)?

  private var session: SessionInfo?
  private var stacks = EnqueueStacks()
  private var threads: [Int64: String] = [:]
  /// Matched objects of the current session, by id, as indices into `histories`.
  private var open: [UInt64: Int] = [:]
  private var byAddress: [Address: Int] = [:]
  /// Matched objects only a check saw (never enqueued), by address, for the `holders`
  /// record that follows such a check.
  private var checkedOnly: [Address: Int] = [:]
  /// Matched objects still in their queue.
  private var waiting: Set<Int> = []
  private var firstOfSession = 0

  public init(
    _ selector: ObjectSelector, stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter,
    symbolizer: (any FrameSymbolizer)? = nil
  ) {
    self.selector = selector
    self.stuckAfter = stuckAfter
    self.symbolizer = symbolizer
  }

  /// What went wrong while symbolizing, if a symbolizer was given.
  public var symbolizationProblems: [String] { symbolizer?.problems ?? [] }

  public mutating func warn(_ warning: LogWarning) {
    capped.add(warning)
  }

  public mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info):
      session = info
      stacks.removeAll()
      threads = [:]
      open = [:]
      byAddress = [:]
      checkedOnly = [:]
      waiting = []
      firstOfSession = histories.count
    case .sessionEnded(let ending):
      finish(ending)
      session = nil
    case .record(let record):
      guard session != nil else { return }
      apply(record, location)
    }
  }

  private func wanted(_ enqueue: EnqueueRecord) -> Bool {
    switch selector {
    case .id(let id): return enqueue.id == id
    case .address(let address): return enqueue.object == address
    case .type: return selector.matches(type: enqueue.type)
    case .finding(_, let members): return members.ids.contains(.init(session!.index, enqueue.id))
    }
  }

  private mutating func apply(_ record: LogRecord, _ location: LogLocation) {
    switch record {
    case .stack(let stack): stacks.record(stack)
    case .thread(let thread): threads[thread.tid] = thread.name
    case .enqueue(let r):
      startHistory(r, record, location)
    case .release(let r):
      guard let index = open[r.id] else { return }
      waiting.remove(index)
      histories[index].lifecycle?.recordRelease(
        at: r.time, freed: r.freed, retainCount: r.retainCount)
      histories[index].entries.append(.init(record: record, location: location))
    case .dealloc(let r):
      guard let index = open[r.id] else { return }
      histories[index].lifecycle?.recordDealloc(at: r.time)
      histories[index].entries.append(.init(record: record, location: location))
    case .drain(let r):
      // A drain of the object's queue while it waited explains when the queue acted.
      for index in waiting.sorted()
      where histories[index].queue == r.queue && (histories[index].enqueuedAt ?? .max) <= r.time {
        append(.init(record: record, location: location), to: index)
      }
    case .check(let r):
      applyCheck(r, record, location)
    case .holders(let r):
      // Who held it, at a release, a check or the session's end: by id, else by address.
      var index = r.id.flatMap { open[$0] }
      if index == nil && r.id == nil { index = byAddress[r.object] ?? checkedOnly[r.object] }
      guard let index else { return }
      var resolved = r
      if symbolizer != nil { resolved.holders = r.holders.symbolized(with: &symbolizer!) }
      append(.init(record: .holders(resolved), location: location), to: index)
    case .session, .mark, .end, .cut, .census, .unknown:
      break
    }
  }

  /// Opens a history for an enqueue the selector wants, while there is room for one.
  private mutating func startHistory(
    _ r: EnqueueRecord, _ record: LogRecord, _ location: LogLocation
  ) {
    // Checks without an id match the latest enqueue of their address.
    byAddress[r.object] = nil
    guard wanted(r) else { return }
    guard histories.count < maximumObjects else {
      omitted += 1
      return
    }
    var history = ObjectHistory(
      session: session!, id: r.id, address: r.object, type: r.type, queue: r.queue)
    history.lifecycle = ObjectLifecycle(enqueuedAt: r.time)
    history.stack = stacks.frames(of: r)
    if !history.stack.isEmpty, symbolizer != nil {
      history.stack = symbolizer!.symbolize(history.stack)
    }
    history.entries.append(.init(record: record, location: location))
    open[r.id] = histories.count
    waiting.insert(histories.count)
    byAddress[r.object] = histories.count
    histories.append(history)
  }

  /// Adds a check to the history of the object it matched (by id, else by address), or
  /// opens a history of its own for a check of a wanted object that was never enqueued.
  private mutating func applyCheck(
    _ r: CheckRecord, _ record: LogRecord, _ location: LogLocation
  ) {
    // Judged as of no object here; a matched object's check is judged again at the end.
    let entry = ObjectHistory.Entry(
      record: record, location: location,
      verdict: r.alive ? ObjectLifecycle.verdict(ofCheckAt: r.time, of: nil) : nil)
    var index = r.id.flatMap { open[$0] }
    if index == nil && r.id == nil { index = byAddress[r.object] }
    guard let index else {
      let matches: Bool
      switch selector {
      case .id: matches = false
      case .address(let address): matches = r.object == address
      case .type: matches = selector.matches(type: r.type)
      case .finding(_, let members):
        matches = members.addresses.contains(.init(session!.index, r.object))
      }
      guard matches, histories.count < maximumObjects else { return }
      var history = ObjectHistory(
        session: session!, id: r.id, address: r.object, type: r.type, queue: nil)
      history.entries.append(entry)
      checkedOnly[r.object] = histories.count
      histories.append(history)
      return
    }
    // Judged by `t` at the session's end, when the release is known (see `finish`).
    append(entry, to: index)
  }

  /// Appends a drain or check while the history has room, else counts it.
  private mutating func append(_ entry: ObjectHistory.Entry, to index: Int) {
    if histories[index].entries.count < maximumEntries {
      histories[index].entries.append(entry)
    } else {
      histories[index].omittedEntries += 1
    }
  }

  private mutating func finish(_ ending: SessionEnding) {
    let end = EndOfSession(ending, stuckAfter: stuckAfter)
    for index in firstOfSession..<histories.count {
      histories[index].sessionLastTime = ending.lastTime
      histories[index].threads = threads
      guard let lifecycle = histories[index].lifecycle else { continue }
      for entry in histories[index].entries.indices {
        guard case .check(let check) = histories[index].entries[entry].record, check.alive
        else { continue }
        histories[index].entries[entry].verdict = lifecycle.verdict(ofCheckAt: check.time)
      }
      histories[index].state = lifecycle.state(at: end)
    }
  }
}
