/// What the analyzer keeps while a session is being read: the objects still in a queue, the
/// survivors of their release, the session's stacks and queues. Dropped at the session's end.
struct SessionState {
  /// An object enqueued and not yet released.
  struct Live {
    var enqueuedAt: Int64
    var address: Address
    var type: String
    var queue: String
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

  let info: SessionInfo
  var stacks: [Int64: [Frame]] = [:]
  var symbolizedStacks: [Int64: [Frame]] = [:]
  var threads: [Int64: String] = [:]
  var live: [UInt64: Live] = [:]
  var liveByAddress: [Address: UInt64] = [:]
  var survivors: [UInt64: Survivor] = [:]
  var survivorByAddress: [Address: UInt64] = [:]
  var queueOrder: [String] = []
  var queues: [String: QueueTimeline] = [:]
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

  mutating func timeline(_ queue: String) -> QueueTimeline {
    if let timeline = queues[queue] { return timeline }
    queueOrder.append(queue)
    let timeline = QueueTimeline(queue: queue, session: info.index)
    queues[queue] = timeline
    return timeline
  }
}
