import DeallocLog

/// What all finding members of one type enqueued through one stack share: the stack's
/// frames, the ``Signature`` and the keys the ``FindingCollector`` groups by.
///
/// Why: a session's objects share a few hundred stacks, and a signature costs string work
/// (machinery frames, owning contexts, the key's text). Computed once per distinct
/// (type, stack) of a session, a log of a million unreleased objects costs a million table
/// lookups at the session's end instead of a million signatures (issue 11's cliff).
struct FindingOrigin {
  /// Dense per session, so that the collector can remember each origin's finding in an array;
  /// ``uncached`` for an origin made for one member, which the collector does not remember.
  var id: Int
  static let uncached = -1
  var signature: Signature
  var stack: [Frame]
  /// ``Signature/key``.
  var signatureKey: String
  /// The stack's return addresses, which tell the finding's stack variants apart.
  var stackKey: String
}

/// The origins of one session, by type row and stack id. Dropped with the session: stack ids
/// are per session.
struct FindingOrigins {
  private struct Key: Hashable {
    var type: Int
    var stack: Int64?
  }

  /// What an origin takes from its stack alone: the frames, the callers a signature keeps
  /// (machinery skipped) and the stack key. Kept per stack, because generated and real logs
  /// alike pair a few hundred stacks with many types, and the machinery rule is string work
  /// per frame.
  private struct StackPart {
    var frames: [Frame]
    var callers: [Frame]
    var stackKey: String
  }

  private var byKey: [Key: Int] = [:]
  private var byStack: [Int64?: StackPart] = [:]
  private var origins: [FindingOrigin] = []
  /// The last origin asked for: unreleased objects come in runs of one call site.
  private var last: (key: Key, index: Int)?

  /// The origin of members of type row `type` (named `typeName`) enqueued through `stack`;
  /// `frames` resolves the stack, and runs only the first time the stack is seen.
  mutating func origin(
    type: Int, typeName: String, stack: Int64?, frames: () -> [Frame]
  ) -> FindingOrigin {
    let key = Key(type: type, stack: stack)
    if let last, last.key == key { return origins[last.index] }
    let index: Int
    if let known = byKey[key] {
      index = known
    } else {
      let part = stackPart(stack, frames)
      let signature = Signature(type: typeName, frames: part.callers)
      index = origins.count
      origins.append(
        FindingOrigin(
          id: index, signature: signature, stack: part.frames, signatureKey: signature.key,
          stackKey: part.stackKey))
      byKey[key] = index
    }
    last = (key, index)
    return origins[index]
  }

  private mutating func stackPart(_ stack: Int64?, _ frames: () -> [Frame]) -> StackPart {
    if let known = byStack[stack] { return known }
    let resolved = frames()
    let part = StackPart(
      frames: resolved, callers: Signature.callers(in: resolved),
      stackKey: FindingCollector.key(of: resolved))
    byStack[stack] = part
    return part
  }
}
