/// An object's strong and unowned retains and releases, oldest first, as the recorder kept
/// them for a type `DEALLOCTRACE_HISTORY` named: a `holders` record's optional `history`.
///
/// What it is exact about: each retain or release is one the recorder saw (swift_retain,
/// swift_retain_n, swift_release, swift_release_n through the runtime's hooks; the unowned
/// entries through the recorder's own definitions, where the program's calls reach them:
/// history.c), with the strong count after it; the allocation and each hand-over to a queue
/// are marked too. What it is not: the optimizer merges and removes retains in -O builds, so
/// there the stacks name the functions that kept references, not the statements.
public struct RetainHistory: Sendable, Equatable {
  /// What an event did to the object's references.
  public enum Kind: String, Sendable, Equatable {
    /// A strong retain: a new reference.
    case retain
    /// A strong release: a reference given back.
    case release
    /// The allocation: the object's first reference (`alloc`).
    case allocation = "alloc"
    /// A hand-over to a DeallocQueue (`enqueue`): the program's reference became the
    /// queue's, which the queue's release gives back.
    case enqueue
    /// An unowned retain (`unowned-retain`): an unowned reference, which keeps the object's
    /// memory, never the object; its count is the strong count, which it leaves as it was.
    case unownedRetain = "unowned-retain"
    /// An unowned release (`unowned-release`): an unowned reference given back.
    case unownedRelease = "unowned-release"
    /// A reference no hook saw taken (a weak reference loaded strong, or an unowned one where
    /// the recorder's definitions are not reached), inferred by ``RetainPairing`` where the
    /// count after an event rose more than the events say; never in a log.
    case unseen
  }

  public struct Event: Sendable, Equatable {
    public var kind: Kind
    /// The strong count after it, when the recorder knew it.
    public var countAfter: Int?
    /// Innermost frame first.
    public var frames: [Frame]

    /// A strong retain or the allocation: a strong reference taken.
    public var isRetain: Bool { kind == .retain || kind == .allocation || kind == .unseen }
    /// An unowned retain or release, which the pairing keeps apart from the strong ones.
    public var isUnowned: Bool { kind == .unownedRetain || kind == .unownedRelease }

    public init(_ kind: Kind, countAfter: Int? = nil, frames: [Frame]) {
      self.kind = kind
      self.countAfter = countAfter
      self.frames = frames
    }
  }

  public var events: [Event]
  /// Paired events the recorder's per-object cap dropped (the record's `dropped`; 0 when
  /// absent): the history kept its unpaired events and these many fewer paired ones.
  public var droppedPaired: Int
  /// Events the recorder could not keep at all, its tables being full, in the process so far
  /// (the record's `lost`; 0 when absent).
  public var lost: Int

  public init(events: [Event], droppedPaired: Int = 0, lost: Int = 0) {
    self.events = events
    self.droppedPaired = droppedPaired
    self.lost = lost
  }
}
