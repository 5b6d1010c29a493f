/// Groups problem objects into ``Finding``s by kind and signature, keeping a few examples.
struct FindingCollector {
  var maximumExamples = 5
  private var groups: [String: Int] = [:]
  private var findings: [Finding] = []
  /// For true leaks: the first check's verdict, which explains the group.
  private var firstVerdicts: [Int: CheckVerdict] = [:]
  /// Per finding, its distinct stacks (keyed by their return addresses) → variant index.
  private var variantIndexes: [[String: Int]] = []
  /// Distinct stacks kept per finding; members with further stacks count in the last one,
  /// so memory stays bounded however varied a leak's call sites are.
  static let maximumVariants = 32

  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], _ example: FindingExample,
    verdict: CheckVerdict? = nil
  ) {
    let key = kind.rawValue + "\u{1}" + signature.key
    let stackKey = stack.map { String($0.ip, radix: 16) }.joined(separator: ",")
    var example = example
    example.stackKey = stackKey
    if let index = groups[key] {
      findings[index].count += 1
      if findings[index].examples.count < maximumExamples {
        findings[index].examples.append(example)
      }
      if let variant = variantIndexes[index][stackKey] {
        findings[index].stackVariants[variant].count += 1
      } else if findings[index].stackVariants.count < Self.maximumVariants {
        variantIndexes[index][stackKey] = findings[index].stackVariants.count
        findings[index].stackVariants.append(
          StackVariant(key: stackKey, stack: stack, count: 1))
      } else {
        findings[index].stackVariants[Self.maximumVariants - 1].count += 1
      }
      return
    }
    groups[key] = findings.count
    if let verdict { firstVerdicts[findings.count] = verdict }
    variantIndexes.append([stackKey: 0])
    findings.append(
      Finding(
        kind: kind, signature: signature, stack: stack, count: 1, examples: [example],
        explanation: "", stackVariants: [StackVariant(key: stackKey, stack: stack, count: 1)]))
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
