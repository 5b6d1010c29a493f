/// What the analyzer keeps while a session is being read: the objects still in a queue, the
/// survivors of their release, the session's stacks and queues. Dropped at the session's end.
///
/// Objects refer to their type and queue by index, so that the per-object tables hold no
/// strings (no reference counting on the hot path).
struct SessionState {
  /// An object enqueued and not yet released.
  struct Live {
    var enqueuedAt: Int64
    var address: Address
    /// Index into the analyzer's type rows.
    var type: Int32
    /// Index into ``SessionState/timelines``.
    var queue: Int32
    var stack: Int64?
    var line: Int
  }

  /// An object released with `freed: false` and not yet deallocated.
  struct Survivor {
    var live: Live
    var releasedAt: Int64
    var retainCount: Int?
    var line: Int
  }

  /// A check that saw its object alive, waiting for the session's end to be explained.
  struct PendingCheck {
    var verdict: CheckVerdict.Verdict
    var check: CheckRecord
    var line: Int
    var facts: ObjectFacts?
    /// The stack of the matched object, for the finding and the explanation.
    var stack: Int64?
  }

  var info: SessionInfo
  var stacks: [Int64: [Frame]] = [:]
  var symbolizedStacks: [Int64: [Frame]] = [:]
  var threads: [Int64: String] = [:]
  /// By object id.
  var live = IntegerTable<Live>()
  /// Object id by address (the latest enqueue of each address still in a queue).
  var liveByAddress = IntegerTable<UInt64>()
  /// By object id.
  var survivors = IntegerTable<Survivor>()
  /// Object id by address.
  var survivorByAddress = IntegerTable<UInt64>()
  /// Timelines in order of first appearance, and their index by queue name.
  var timelines: [QueueTimeline] = []
  private var queueIndex: [String: Int] = [:]
  var summary = Summary()
  var marks: [MarkRecord] = []
  var omittedMarks = 0
  var checks: [PendingCheck] = []
  /// Ids of objects that listed checks refer to, with the indices of those checks.
  var watched: [UInt64: [Int]] = [:]

  init(_ info: SessionInfo) {
    self.info = info
    summary.sessions = 1
  }

  /// The index of `queue`'s timeline, created on first use. Queues are few: a short scan
  /// (interned names compare by identity first) beats hashing the name.
  mutating func timeline(_ queue: String) -> Int {
    for index in timelines.indices.prefix(8) where timelines[index].queue == queue {
      return index
    }
    if let index = queueIndex[queue] { return index }
    timelines.append(QueueTimeline(queue: queue, session: info.index))
    queueIndex[queue] = timelines.count - 1
    return timelines.count - 1
  }
}
