import DeallocLog

/// An object a leak assertion watched and found still alive after every queue let it go.
///
/// Its `description` is the failure message: the type, the address, the state and where
/// the enqueue stack is, so that a CI log alone says what leaked and where to look next.
public struct LeakFinding: Sendable, CustomStringConvertible {
  /// Why the object is still alive, as far as the queues can tell.
  ///
  /// A struct with static members rather than an enum: the leak checks learn new ways to
  /// tell why an object survived, and a client's exhaustive `switch` must not break when
  /// they do. Compare with `==`, or read ``queues``.
  public struct State: Sendable, Hashable {
    /// The queues the state names: those that released it, when known; empty otherwise.
    public let queues: [String]
    let cause: Cause

    /// The closed set behind the public values, for this module's own `switch`.
    enum Cause: Sendable, Hashable {
      case notQueued, survivedRelease, survivedEarlierRelease
    }

    /// No queue held it at the end of the test and, as far as the trace tells, none
    /// released it earlier: it was never handed to a `DeallocQueue`, a plain leak. With
    /// tracing off, a queue may also have released it earlier; only the trace can tell.
    public static let notQueued = State(queues: [], cause: .notQueued)

    /// It waited in the queues named, the leak check drained them, and it survived that
    /// release: something else holds a strong reference (a real leak, not a delayed one).
    public static func survivedRelease(queues: [String]) -> State {
      State(queues: queues, cause: .survivedRelease)
    }

    /// A queue let it go before the leak check looked (the queue's own timer, or a drain by
    /// someone else) and it survived that release: a real leak, found by the tracer, which
    /// watches every survivor. `queue` is the queue's label, when the trace log gave it.
    public static func survivedEarlierRelease(queue: String?) -> State {
      State(queues: queue.map { [$0] } ?? [], cause: .survivedEarlierRelease)
    }
  }

  /// The fully qualified type name, `String(reflecting:)`.
  public let typeName: String
  /// The object's address in lower-case hex, `0x…`, as the trace log writes it.
  public let address: String
  public let state: State
  /// The strong references still holding it, not counting the leak check's own.
  public let otherStrongReferences: Int
  /// The tracer's id for the object, when a queue held it or the tracer watched it as a
  /// survivor; it names the object in the log.
  public let traceID: UInt64?
  /// Where the test started watching the object.
  public let callSite: CallSite
  /// The test (or scope) that watched it; the `check` records carry the same label.
  public let label: String
  /// The trace log the check records went to; `nil` when tracing was off.
  public let traceLog: String?
  /// The program frames that handed the object to its queue, innermost first, read back
  /// from the trace log; empty when tracing was off, the object was never queued, or the
  /// log has no stacks (`DEALLOCTRACE_FRAMES=0`).
  public let enqueueStack: [String]
  /// Who held the object at the last look, when holder scanning is on
  /// (`DEALLOCTRACE_HOLDERS=1`); `nil` otherwise.
  public var holders: HolderReport? {
    if case .found(let report) = holderOutcome { return report }
    return nil
  }
  /// What the holder scan said, for the message.
  let holderOutcome: HolderLookup.Outcome

  public var description: String {
    ([
      "\(typeName) at \(address) is still alive at the end of \(label) (watched at \(callSite))",
      "  state: \(stateDescription)",
    ] + holderLines.map { "  " + $0 } + ["  enqueue stack: \(stackDescription)"])
    .joined(separator: "\n")
      + enqueueStack.prefix(Self.shownFrames).map { "\n    \($0)" }.joined()
      + (enqueueStack.count > Self.shownFrames
        ? "\n    … \(enqueueStack.count - Self.shownFrames) more frames" : "")
  }

  /// Who holds it: the path as every report shows it, or why there is none.
  private var holderLines: [String] {
    switch holderOutcome {
    case .found(let report):
      let value = UInt64(address.dropFirst(2), radix: 16)
      return HolderPathText.lines(report, type: typeName, address: value.map(Address.init))
    case .off:
      return [
        "held by: unknown; set DEALLOCTRACE_HOLDERS=1 in the test's environment to see the"
          + " references that hold it"
      ]
    case .unavailable(let reason):
      return ["held by: unknown; \(reason)"]
    }
  }

  /// How many enqueue frames a failure message shows.
  private static let shownFrames = 6

  private var references: String {
    switch otherStrongReferences {
    case ..<1: "no strong reference is counted; an unowned or unbalanced retain keeps it"
    case 1: "1 other strong reference holds it"
    default: "\(otherStrongReferences) other strong references hold it"
    }
  }

  private var stateDescription: String {
    switch state.cause {
    case .notQueued where traceLog == nil:
      "leaked: it waits in no DeallocQueue (never handed to one, or released by one earlier) "
        + "and \(references)"
    case .notQueued:
      "leaked: it waits in no DeallocQueue and the trace shows no queue releasing it "
        + "(a plain leak), and \(references)"
    case .survivedEarlierRelease:
      "survived its release by "
        + (state.queues.first.map { "DeallocQueue \"\($0)\"" } ?? "a DeallocQueue")
        + ": the queue let it go before the leak check looked, and \(references)"
    case .survivedRelease:
      "survived its release: DeallocQueue "
        + state.queues.map { "\"\($0)\"" }.joined(separator: ", ")
        + " let it go when the leak check drained it, and \(references)"
    }
  }

  private var stackDescription: String {
    switch (traceID, traceLog) {
    case (.some(let id), .some(let log)) where !enqueueStack.isEmpty:
      return "object id \(id) in the trace log \(log), enqueued at:"
    case (.some(let id), .some(let log)):
      return "object id \(id) in the trace log \(log); `dealloctrace report \(log)` shows it"
    case (.some(let id), nil):
      return "object id \(id) in the trace log; `dealloctrace report` shows it"
    case (nil, .some(let log)):
      return "no queue held it at the end of the test; any earlier enqueue of \(address) "
        + "is in the trace log \(log)"
    case (nil, nil):
      return "not recorded: tracing is off (set DEALLOCTRACE_LOG=FILE to record it, and "
        + "to learn whether a queue released it earlier)"
    }
  }
}
