/// The verdict on one `check` that saw its object alive: a false leak (the object was waiting
/// in a queue, a delayed dealloc) or a true leak.
public struct CheckVerdict: Sendable, Equatable {
  public enum Verdict: String, Sendable, Codable {
    /// The object was in a queue at the check's time: its dealloc was only delayed.
    case falseLeak
    /// The object was alive and not in any queue.
    case trueLeak
  }

  public var verdict: Verdict
  public var session: Int
  public var check: CheckRecord
  public var location: LogLocation
  /// The enqueue the check was matched with (by `id`, else by address), when there is one.
  public var object: ObjectFacts?
  /// One or two plain sentences that say what happened.
  public var explanation: String
  /// Who held the object, from the `holders` record that followed a true-leak check in a
  /// session recorded with holders; `nil` otherwise.
  public var holders: HolderReport? = nil
}

/// What the log says about one enqueued object, as far as the analyzer followed it.
public struct ObjectFacts: Sendable, Equatable {
  public var id: UInt64
  public var address: Address
  public var type: String
  public var queue: String
  public var enqueuedAt: Int64
  /// The innermost caller outside the queue and tracer, when the stack is known.
  public var enqueuedBy: Frame?
  public var releasedAt: Int64?
  /// Whether the release freed it (`nil` before the release).
  public var freedByRelease: Bool?
  public var retainCountAfterRelease: Int?
  public var deallocAt: Int64?
  /// The final state, once the session is over.
  public var state: ObjectState?
}
