/// Groups problem objects into ``Finding``s by kind and signature, keeping a few examples.
struct FindingCollector {
  var maximumExamples = 5
  private var groups: [String: Int] = [:]
  private var findings: [Finding] = []
  /// For true leaks: the first check's verdict, which explains the group.
  private var firstVerdicts: [Int: CheckVerdict] = [:]
  /// Per finding, its distinct stacks (keyed by their return addresses) → variant index.
  private var variantIndexes: [[String: Int]] = []
  /// Distinct stacks kept per finding, so memory stays bounded however varied a leak's call
  /// sites are. Members with further stacks go to one more variant, ``overflowKey``, that has
  /// no stack: no `frame:` suppression can match it, since its members' frames are not known.
  static let maximumVariants = 32
  /// The key of the overflow variant: no stack's key (hex return addresses) looks like it.
  static let overflowKey = "*"

  /// Adds one member, with its example.
  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], _ example: FindingExample,
    verdict: CheckVerdict? = nil
  ) {
    let key = kind.rawValue + "\u{1}" + signature.key
    let stackKey = Self.key(of: stack)
    var example = example
    guard let index = groups[key] else {
      example.stackKey = stackKey
      groups[key] = findings.count
      if let verdict { firstVerdicts[findings.count] = verdict }
      variantIndexes.append([stackKey: 0])
      findings.append(
        Finding(
          kind: kind, signature: signature, stack: stack, holders: example.holders, count: 1,
          examples: [example], explanation: "",
          stackVariants: [StackVariant(key: stackKey, stack: stack, count: 1)]))
      return
    }
    findings[index].count += 1
    if findings[index].holders == nil { findings[index].holders = example.holders }
    example.stackKey = countInVariant(index, stackKey, stack, 1)
    if findings[index].examples.count < maximumExamples {
      findings[index].examples.append(example)
    }
  }

  /// Adds `members` members enqueued through `stack`, without examples: those the analyzer
  /// counted but did not keep. A finding that does not exist yet starts without examples.
  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], members: Int
  ) {
    guard members > 0 else { return }
    let key = kind.rawValue + "\u{1}" + signature.key
    let stackKey = Self.key(of: stack)
    guard let index = groups[key] else {
      groups[key] = findings.count
      variantIndexes.append([stackKey: 0])
      findings.append(
        Finding(
          kind: kind, signature: signature, stack: stack, count: members, examples: [],
          explanation: "",
          stackVariants: [StackVariant(key: stackKey, stack: stack, count: members)]))
      return
    }
    findings[index].count += members
    _ = countInVariant(index, stackKey, stack, members)
  }

  /// Counts `members` in the variant of `stackKey` of finding `index`, creating it while
  /// there is room, else in the overflow variant. Returns the key of the variant used.
  private mutating func countInVariant(
    _ index: Int, _ stackKey: String, _ stack: [Frame], _ members: Int
  ) -> String {
    if let variant = variantIndexes[index][stackKey] {
      findings[index].stackVariants[variant].count += members
      return stackKey
    }
    if variantIndexes[index].count < Self.maximumVariants {
      variantIndexes[index][stackKey] = findings[index].stackVariants.count
      findings[index].stackVariants.append(
        StackVariant(key: stackKey, stack: stack, count: members))
      return stackKey
    }
    if let last = findings[index].stackVariants.indices.last,
      findings[index].stackVariants[last].key == Self.overflowKey
    {
      findings[index].stackVariants[last].count += members
    } else {
      findings[index].stackVariants.append(
        StackVariant(key: Self.overflowKey, stack: [], count: members))
    }
    return Self.overflowKey
  }

  private static func key(of stack: [Frame]) -> String {
    stack.map { String($0.ip, radix: 16) }.joined(separator: ",")
  }

  /// Most serious kind first, then the largest group, then the first seen.
  func sorted() -> [Finding] {
    var explained = findings
    for index in explained.indices {
      explained[index].explanation = Explanations.finding(
        explained[index], firstCheck: firstVerdicts[index])
    }
    return explained.enumerated().sorted { a, b in
      if a.element.kind != b.element.kind { return a.element.kind < b.element.kind }
      if a.element.count != b.element.count { return a.element.count > b.element.count }
      return a.offset < b.offset
    }.map(\.element)
  }
}
