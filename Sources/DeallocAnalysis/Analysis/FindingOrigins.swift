import DeallocLog

/// What all finding members of one type enqueued through one stack (and, when the recorder
/// scanned for holders, held the same way) share: the stack's frames, the ``Signature`` and
/// the keys the ``FindingCollector`` groups by.
///
/// Why: a session's objects share a few hundred stacks, and a signature costs string work
/// (machinery frames, owning contexts, the key's text). Computed once per distinct
/// (type, stack, holder key) of a session, a log of a million unreleased objects costs a
/// million table lookups at the session's end instead of a million signatures (issue 11's
/// cliff). A class, so that handing an origin to every member costs one reference count.
final class FindingOrigin {
  /// Dense per session, so that the collector can remember each origin's finding in an array.
  let id: Int
  let signature: Signature
  /// The signature's program frames, which its grouping key and its findings' ids take.
  let programFrames: ProgramFrames
  let stack: [Frame]
  /// ``Signature/groupingKey``.
  let groupingKey: String
  /// The stack's return addresses, which tell the finding's stack variants apart.
  let stackKey: String
  /// The innermost caller's short name, for the sentences of the origin's checks; worked out
  /// on first use.
  private(set) lazy var callerName: String? = signature.frames.first?.shortName

  init(
    id: Int, signature: Signature, programFrames: ProgramFrames, stack: [Frame],
    groupingKey: String, stackKey: String
  ) {
    self.id = id
    self.signature = signature
    self.programFrames = programFrames
    self.stack = stack
    self.groupingKey = groupingKey
    self.stackKey = stackKey
  }
}

/// The origins of one session, by type row, stack slot (``StackSlots``) and holder key.
/// Dropped with the session: stack slots are per session.
///
/// Looked up once per unreleased object at the session's end, so the common case (no holder
/// key) costs one integer lookup: (stack slot, type row) to the origin. Only members with a
/// holder key hash a string.
struct FindingOrigins {
  private struct HolderKeyed: Hashable {
    var type: Int
    var stack: StackSlot
    var holderKey: String
  }

  /// What an origin takes from its stack alone: the frames, the callers a signature keeps
  /// (machinery skipped), their part of the grouping key and the stack key. Kept per stack,
  /// because generated and real logs alike pair a few hundred stacks with many types, and
  /// the machinery rule is string work per frame.
  private struct StackPart {
    var frames: [Frame]
    var callers: [Frame]
    var programFrames: ProgramFrames
    /// The callers' part of the grouping key (``Signature/groupingCallersKey(_:)``).
    var callersKey: String
    var stackKey: String
  }

  /// By ``StackSlot/denseIndex``, made on a stack's first use.
  private var stackParts: [StackPart?] = []
  /// Origin index by ``pair(type:stackIndex:)``.
  private var byTypeAndStack: [UInt64: Int32] = [:]
  private var byHolderKey: [HolderKeyed: Int] = [:]
  /// Whether each frame seen is machinery, by return address; the frame is kept to confirm
  /// the match, since a log may name two frames at one address differently. Why: every stack
  /// starts with the same few frames of the queue and the tracer, whose demangled names are
  /// the slowest to judge.
  private var machinery: [UInt64: (frame: Frame, isMachinery: Bool)] = [:]
  private var origins: [FindingOrigin] = []

  /// The origin of members of type row `type` enqueued through `stack` and held as
  /// `holderKey` says (`nil`: no holders record), if an earlier member made it.
  func known(type: Int, stack: StackSlot, holderKey: String? = nil) -> FindingOrigin? {
    knownID(type: type, stack: stack, holderKey: holderKey).map { origins[$0] }
  }

  /// The ``FindingOrigin/id`` of ``known(type:stack:holderKey:)``: what a member that joins
  /// an origin's finding needs (``FindingCollector/addMember(_:originID:holders:_:)``),
  /// without taking a reference to the origin (two atomic operations per member).
  func knownID(type: Int, stack: StackSlot, holderKey: String? = nil) -> Int? {
    if let holderKey {
      return byHolderKey[HolderKeyed(type: type, stack: stack, holderKey: holderKey)]
    }
    return byTypeAndStack[Self.pair(type: type, stack: stack)].map(Int.init)
  }

  /// ``known(type:stack:holderKey:)``, made on first use: `typeName` names type row `type`,
  /// and `frames` are `stack`'s (used only the first time the stack is seen).
  mutating func origin(
    type: Int, typeName: String, stack: StackSlot, holderKey: String? = nil, frames: [Frame]
  ) -> FindingOrigin {
    if let known = known(type: type, stack: stack, holderKey: holderKey) { return known }
    let part = stackPart(stack, frames)
    let origin = FindingOrigin(
      id: origins.count,
      signature: Signature(type: typeName, frames: part.callers, holderKey: holderKey),
      programFrames: part.programFrames, stack: part.frames,
      groupingKey: Signature.key(
        type: SymbolNormalization.normalized(typeName), callersKey: part.callersKey,
        holderKey: holderKey),
      stackKey: part.stackKey)
    if let holderKey {
      byHolderKey[HolderKeyed(type: type, stack: stack, holderKey: holderKey)] = origin.id
    } else {
      byTypeAndStack[Self.pair(type: type, stack: stack)] = Int32(origin.id)
    }
    origins.append(origin)
    return origin
  }

  /// One integer for a type row and a stack slot, both far below 2^32.
  private static func pair(type: Int, stack: StackSlot) -> UInt64 {
    UInt64(UInt32(truncatingIfNeeded: stack.rawValue)) << 32
      | UInt64(UInt32(truncatingIfNeeded: type))
  }

  /// What `stack` gives every origin, made from `frames` on its first use.
  private mutating func stackPart(_ stack: StackSlot, _ frames: [Frame]) -> StackPart {
    let index = stack.denseIndex
    if index < stackParts.count, let known = stackParts[index] { return known }
    if index >= stackParts.count {
      stackParts.append(contentsOf: repeatElement(nil, count: index + 1 - stackParts.count))
    }
    let callers = Signature.callers(in: frames) { isMachinery($0) }
    let programFrames = ProgramFrames(callers)
    let part = StackPart(
      frames: frames, callers: callers, programFrames: programFrames,
      callersKey: Signature.groupingCallersKey(programFrames),
      stackKey: FindingCollector.key(of: frames))
    stackParts[index] = part
    return part
  }

  private mutating func isMachinery(_ frame: Frame) -> Bool {
    if let known = machinery[frame.ip], known.frame == frame { return known.isMachinery }
    let judged = frame.isMachinery
    machinery[frame.ip] = (frame, judged)
    return judged
  }
}
