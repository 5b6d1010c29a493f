import DeallocLog

/// Groups problem objects into ``Finding``s by kind and signature (the part of it an id
/// hashes, ``Signature/groupingKey``), keeping a few examples.
struct FindingCollector {
  var maximumExamples = 5
  /// Finding index by kind and grouping key (``HashedKey``: hashed once per lookup key).
  private var groups: [HashedKey: Int] = [:]
  private var findings: [Finding] = []
  /// For true leaks: the first check's verdict, which explains the group.
  private var firstVerdicts: [Int: CheckVerdict] = [:]
  /// Per finding, its distinct stacks (keyed by their return addresses) → variant index.
  private var variantIndexes: [[HashedKey: Int]] = []
  /// Distinct stacks kept per finding, so memory stays bounded however varied a leak's call
  /// sites are. Members with further stacks go to one more variant, ``overflowKey``, that has
  /// no stack: no `frame:` suppression can match it, since its members' frames are not known.
  static let maximumVariants = 32
  /// The key of the overflow variant: no stack's key (hex return addresses) looks like it.
  static let overflowKey = "*"
  /// Per ``FindingOrigin/id`` and kind, the finding and stack variant its members joined (+1;
  /// 0: not yet). Valid for the session the origins belong to: see ``forgetOrigins()``.
  private var originSlots: [(finding: Int, variant: Int)?] = []

  /// Adds one member from `origin`, held as `holders` says, with its example: the same as
  /// ``add(_:_:stack:_:verdict:)`` with the origin's signature and stack, but after the
  /// origin's first member it costs no key building or hashing (``addMember(_:originID:holders:_:)``).
  ///
  /// `verdict` is evaluated only when the member starts a finding: a true-leak group's
  /// explanation is its first check's, and building a verdict's text for every other
  /// member was most of the end of a session with thousands of checks.
  mutating func add(
    _ kind: Finding.Kind, _ origin: FindingOrigin, holders: HolderReport? = nil,
    checks: Int = 0, _ example: @autoclosure () -> FindingExample,
    verdict: @autoclosure () -> CheckVerdict? = nil
  ) {
    if addMember(kind, originID: origin.id, holders: holders, checks: checks, example()) {
      return
    }
    let joined = insert(
      kind, kind.rawValue + "\u{1}" + origin.groupingKey, origin.signature,
      origin.programFrames, stack: origin.stack, stackKey: origin.stackKey, example(),
      verdict: verdict)
    findings[joined.finding].checks += checks
    let slot = Self.slot(kind, originID: origin.id)
    if slot >= originSlots.count {
      originSlots.append(contentsOf: repeatElement(nil, count: slot + 1 - originSlots.count))
    }
    originSlots[slot] = joined
  }

  /// Adds one member from the origin `originID` names when an earlier member of `kind` from
  /// it made or joined a finding, and returns `true`; else adds nothing and returns `false`
  /// (``add(_:_:holders:_:verdict:)`` then adds it). `example` is built only while the
  /// finding has room for one: most members of a large finding are only counted.
  ///
  /// Why apart: nearly every member of a session's findings comes here, and with the origin's
  /// id alone a member costs no reference to the origin.
  mutating func addMember(
    _ kind: Finding.Kind, originID: Int, holders: HolderReport? = nil, checks: Int = 0,
    _ example: @autoclosure () -> FindingExample
  ) -> Bool {
    let slot = Self.slot(kind, originID: originID)
    guard slot < originSlots.count, let (index, variant) = originSlots[slot] else { return false }
    findings[index].addMember(
      variant: variant, holders: holders, checks: checks, maximumExamples: maximumExamples,
      example())
    return true
  }

  /// Where ``originSlots`` keeps the finding of `kind` from origin `originID`.
  private static func slot(_ kind: Finding.Kind, originID: Int) -> Int {
    originID &* 4 &+ order(kind)
  }

  /// Forgets the origins of the session that ended (the next session numbers its own).
  mutating func forgetOrigins() {
    originSlots.removeAll(keepingCapacity: true)
  }

  private static func order(_ kind: Finding.Kind) -> Int {
    switch kind {
    case .leaked: return 0
    case .trueLeak: return 1
    case .stuck: return 2
    case .neverReleased: return 3
    }
  }

  /// Adds one member, with its example.
  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], _ example: FindingExample,
    verdict: @autoclosure () -> CheckVerdict? = nil
  ) {
    let programFrames = ProgramFrames(signature.frames)
    _ = insert(
      kind, kind.rawValue + "\u{1}" + signature.groupingKey(with: programFrames), signature,
      programFrames, stack: stack, stackKey: Self.key(of: stack), example, verdict: verdict)
  }

  /// Adds one member to the finding of `key`; returns the finding and the stack variant it
  /// joined. `programFrames` are `signature`'s.
  private mutating func insert(
    _ kind: Finding.Kind, _ key: String, _ signature: Signature, _ programFrames: ProgramFrames,
    stack: [Frame], stackKey: String, _ example: FindingExample, verdict: () -> CheckVerdict?
  ) -> (finding: Int, variant: Int) {
    var example = example
    let key = HashedKey(key)
    guard let index = groups[key] else {
      example.stackKey = stackKey
      groups[key] = findings.count
      if let verdict = verdict() { firstVerdicts[findings.count] = verdict }
      variantIndexes.append([HashedKey(stackKey): 0])
      findings.append(
        Finding(
          kind: kind, signature: signature, programFrames: programFrames, stack: stack,
          holders: example.holders, count: 1, examples: [example], explanation: "",
          stackVariants: [StackVariant(key: stackKey, stack: stack, count: 1)]))
      return (findings.count - 1, 0)
    }
    findings[index].count += 1
    if findings[index].holders == nil { findings[index].holders = example.holders }
    let variant = countInVariant(index, stackKey, stack, 1)
    example.stackKey = findings[index].stackVariants[variant].key
    if findings[index].examples.count < maximumExamples {
      findings[index].examples.append(example)
    }
    return (index, variant)
  }

  /// Adds `members` members enqueued through `stack`, without examples: those the analyzer
  /// counted but did not keep. A finding that does not exist yet starts without examples.
  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], members: Int
  ) {
    let programFrames = ProgramFrames(signature.frames)
    add(
      kind, key: kind.rawValue + "\u{1}" + signature.groupingKey(with: programFrames), signature,
      programFrames, stack: stack, stackKey: Self.key(of: stack), members: members)
  }

  /// Adds `members` members from `origin`, without examples (see
  /// ``add(_:_:stack:members:)``).
  mutating func add(_ kind: Finding.Kind, _ origin: FindingOrigin, members: Int) {
    add(
      kind, key: kind.rawValue + "\u{1}" + origin.groupingKey, origin.signature,
      origin.programFrames, stack: origin.stack, stackKey: origin.stackKey, members: members)
  }

  private mutating func add(
    _ kind: Finding.Kind, key: String, _ signature: Signature, _ programFrames: ProgramFrames,
    stack: [Frame], stackKey: String, members: Int
  ) {
    guard members > 0 else { return }
    let key = HashedKey(key)
    guard let index = groups[key] else {
      groups[key] = findings.count
      variantIndexes.append([HashedKey(stackKey): 0])
      findings.append(
        Finding(
          kind: kind, signature: signature, programFrames: programFrames, stack: stack,
          count: members, examples: [], explanation: "",
          stackVariants: [StackVariant(key: stackKey, stack: stack, count: members)]))
      return
    }
    findings[index].count += members
    _ = countInVariant(index, stackKey, stack, members)
  }

  /// Counts `members` in the variant of `stackKey` of finding `index`, creating it while
  /// there is room, else in the overflow variant. Returns the index of the variant used (the
  /// overflow variant, once made, stays the last: no variant is made after it).
  private mutating func countInVariant(
    _ index: Int, _ stackKey: String, _ stack: [Frame], _ members: Int
  ) -> Int {
    let key = HashedKey(stackKey)
    if let variant = variantIndexes[index][key] {
      findings[index].stackVariants[variant].count += members
      return variant
    }
    if variantIndexes[index].count < Self.maximumVariants {
      variantIndexes[index][key] = findings[index].stackVariants.count
      findings[index].stackVariants.append(
        StackVariant(key: stackKey, stack: stack, count: members))
      return findings[index].stackVariants.count - 1
    }
    if let last = findings[index].stackVariants.indices.last,
      findings[index].stackVariants[last].key == Self.overflowKey
    {
      findings[index].stackVariants[last].count += members
    } else {
      findings[index].stackVariants.append(
        StackVariant(key: Self.overflowKey, stack: [], count: members))
    }
    return findings[index].stackVariants.count - 1
  }

  /// The key that tells stacks apart: their return addresses, in lower-case hex without a
  /// prefix, joined by commas. Written as bytes: it is built for every distinct stack.
  static func key(of stack: [Frame]) -> String {
    var key: [UInt8] = []
    key.reserveCapacity(stack.count * 13)
    for frame in stack {
      if !key.isEmpty { key.append(UInt8(ascii: ",")) }
      var shift = max(4, (UInt64.bitWidth - frame.ip.leadingZeroBitCount + 3) / 4 * 4)
      while shift > 0 {
        shift -= 4
        let digit = UInt8(truncatingIfNeeded: frame.ip >> UInt64(shift)) & 0xf
        key.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
      }
    }
    return String(decoding: key, as: UTF8.self)
  }

  /// The findings in order of first appearance, each with its explanation (a true-leak
  /// group's is its first check's).
  func explained() -> [Finding] {
    findings.indices.map { index in
      var finding = findings[index]
      finding.explanation = Explanations.finding(finding, firstCheck: firstVerdicts[index])
      return finding
    }
  }

  /// Most serious kind first, then the largest group, then the first in `findings`.
  ///
  /// The positions are sorted, not the findings: moved by the sort, each finding (arrays,
  /// strings, examples) was copied and destroyed at every step, a millisecond for a few
  /// hundred findings at the end of every report.
  static func sorted(_ findings: [Finding]) -> [Finding] {
    findings.indices.sorted { a, b in
      if findings[a].kind != findings[b].kind { return findings[a].kind < findings[b].kind }
      if findings[a].count != findings[b].count { return findings[a].count > findings[b].count }
      return a < b
    }.map { findings[$0] }
  }
}
