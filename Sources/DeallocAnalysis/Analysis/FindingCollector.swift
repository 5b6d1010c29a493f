/// Groups problem objects into ``Finding``s by kind and signature, keeping a few examples.
struct FindingCollector {
  var maximumExamples = 5
  private var groups: [String: Int] = [:]
  private var findings: [Finding] = []
  /// For true leaks: the first check's verdict, which explains the group.
  private var firstVerdicts: [Int: CheckVerdict] = [:]

  mutating func add(
    _ kind: Finding.Kind, _ signature: Signature, stack: [Frame], _ example: FindingExample,
    verdict: CheckVerdict? = nil
  ) {
    let key = kind.rawValue + "\u{1}" + signature.key
    if let index = groups[key] {
      findings[index].count += 1
      if findings[index].examples.count < maximumExamples {
        findings[index].examples.append(example)
      }
      return
    }
    groups[key] = findings.count
    if let verdict { firstVerdicts[findings.count] = verdict }
    findings.append(
      Finding(
        kind: kind, signature: signature, stack: stack, count: 1, examples: [example],
        explanation: ""))
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
