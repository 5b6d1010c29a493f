/// Judges a ``Report`` against ``GateThresholds``, after setting aside the findings that
/// ``SuppressionList`` covers: the library half of `dealloctrace check`.
///
/// Why count from findings rather than the summary: a suppression covers findings, so the
/// counts must come from the same place to add up. Every leaked, stuck, never-released
/// object and every true-leak check belongs to exactly one finding (a check of an object that
/// then leaked belongs to that object's leaked finding), so without suppressions the counts
/// equal the report's summary (true leaks: `trueLeaks - trueLeaksOfLeaked`).
public struct Gate: Sendable {
  public var thresholds: GateThresholds
  public var suppressions: SuppressionList
  /// The known findings: they do not count, unless their count grew past the baseline's.
  public var baseline: Baseline?

  public init(
    thresholds: GateThresholds = GateThresholds(),
    suppressions: SuppressionList = SuppressionList(),
    baseline: Baseline? = nil
  ) {
    self.thresholds = thresholds
    self.suppressions = suppressions
    self.baseline = baseline
  }

  /// The verdict on `report`.
  ///
  /// Each member of a finding is claimed by the first suppression (in file order) that
  /// matches it; a later suppression matching the same members still counts as used. A
  /// finding whose members are claimed by different suppressions becomes one part per
  /// suppression, so that every reason is shown next to the members it set aside.
  public func evaluate(_ report: Report) -> GateResult {
    var used = Array(repeating: false, count: suppressions.suppressions.count)
    var findings: [GateResult.JudgedFinding] = []
    for (reportIndex, finding) in report.findings.enumerated() {
      findings += parts(of: finding, reportIndex: reportIndex, used: &used)
    }
    var fixed = baseline.map { judge(&findings, against: $0) } ?? []
    let results = thresholdResults(findings)
    let failingKinds = Set(results.filter { !$0.passed }.map(\.threshold.kind))
    for index in findings.indices where !findings[index].isSuppressed && !findings[index].isKnown {
      findings[index].failing = failingKinds.contains(findings[index].finding.kind)
    }
    var processLeaks = ProcessLeakResult(
      report, limit: thresholds.maxProcessLeaks, suppressions: suppressions, used: &used)
    // A census entry is fixed only when a census ran: a log without one says nothing of it.
    if let baseline, processLeaks != nil { fixed += processLeaks!.judge(against: baseline) }
    let unused = zip(suppressions.suppressions, used).filter { !$0.1 }.map(\.0)
    var result = GateResult(
      report: report, thresholds: results, findings: findings, unusedSuppressions: unused)
    result.baseline = baseline
    result.fixedBaselineEntries = fixed
    result.processLeaks = processLeaks
    result.growingTypes = GrowingTypesResult(report, limit: thresholds.maxGrowingTypes)
    result.libraryLeaks = LibraryLeakResult(report, limit: thresholds.maxLibraryLeaks)
    return result
  }

  /// `finding` split by the suppressions: the part that counts, then one part per
  /// suppression that claimed members, in file order. Marks in `used` every suppression that
  /// matched.
  ///
  /// Each distinct enqueue stack of the finding's members is judged on its own: the members a
  /// suppression covers are set aside, the others still count.
  private func parts(
    of finding: Finding, reportIndex: Int, used: inout [Bool]
  ) -> [GateResult.JudgedFinding] {
    let variants =
      finding.stackVariants.isEmpty
      ? [StackVariant(key: "", stack: finding.stack, count: finding.count)]
      : finding.stackVariants
    var counted: [StackVariant] = []
    var covered: [Int: [StackVariant]] = [:]
    for variant in variants {
      var first: Int?
      for (index, suppression) in suppressions.suppressions.enumerated()
      where suppression.matches(
        type: finding.signature.type, stack: variant.stack, id: finding.id,
        ruleOneID: finding.ruleOneID, ruleTwoID: finding.ruleTwoID)
      {
        used[index] = true
        if first == nil { first = index }
      }
      if let first {
        covered[first, default: []].append(variant)
      } else {
        counted.append(variant)
      }
    }
    var parts: [GateResult.JudgedFinding] = []
    if !counted.isEmpty {
      parts.append(
        GateResult.JudgedFinding(
          finding: finding.part(counted), suppressedBy: nil, failing: false,
          reportIndex: reportIndex))
    }
    for index in covered.keys.sorted() {
      parts.append(
        GateResult.JudgedFinding(
          finding: finding.part(covered[index]!),
          suppressedBy: suppressions.suppressions[index], failing: false,
          reportIndex: reportIndex))
    }
    return parts
  }

  /// Each threshold's count (members that count) against its limit, with how many members
  /// suppressions and the baseline set aside.
  private func thresholdResults(
    _ findings: [GateResult.JudgedFinding]
  ) -> [GateResult.ThresholdResult] {
    GateThresholds.Threshold.allCases.map { threshold in
      let ofKind = findings.filter { $0.finding.kind == threshold.kind }
      let count = ofKind.reduce(0) { $0 + $1.countedMembers }
      let suppressed = ofKind.filter(\.isSuppressed).reduce(0) { $0 + $1.finding.count }
      let unsuppressed = ofKind.filter { !$0.isSuppressed }.reduce(0) { $0 + $1.finding.count }
      var result = GateResult.ThresholdResult(
        threshold: threshold, limit: thresholds[threshold], count: count, suppressed: suppressed)
      result.known = unsuppressed - count
      return result
    }
  }

  /// Marks each unsuppressed finding new, known or grown against `baseline`, and returns
  /// the baseline's entries that no unsuppressed finding matched (fixed: an entry whose
  /// finding a suppression now covers is not needed either).
  ///
  /// An id's count is an allowance shared, in report order, by the findings with that id
  /// (several only when they differ in what the id leaves out, see ``FindingID``).
  private func judge(
    _ findings: inout [GateResult.JudgedFinding], against baseline: Baseline
  ) -> [FindingDigest] {
    // One entry per id (a file refuses repeats, and `Baseline` combines those made in code).
    var allowance = Dictionary(baseline.entries.map { ($0.id, $0.count) }, uniquingKeysWith: +)
    var seen: Set<FindingID> = []
    for index in findings.indices where !findings[index].isSuppressed {
      let id = findings[index].finding.id
      seen.insert(id)
      let count = findings[index].finding.count
      guard let allowed = allowance[id] else {
        findings[index].baseline = .new
        continue
      }
      if count <= allowed {
        findings[index].baseline = .known(baselineCount: allowed)
        allowance[id] = allowed - count
      } else {
        findings[index].baseline = .grown(baselineCount: allowed)
        allowance[id] = 0
      }
    }
    return baseline.entries.filter { !$0.isProcess && !seen.contains($0.id) }
  }
}

extension Finding {
  /// The part of this finding made of the members with `variants`' stacks, with only
  /// their examples and an explanation that counts only them: the whole finding when that
  /// is all of them.
  fileprivate func part(_ variants: [StackVariant]) -> Finding {
    let count = variants.reduce(0) { $0 + $1.count }
    guard count != self.count else { return self }
    let keys = Set(variants.map(\.key))
    var part = self
    part.count = count
    part.stack = variants.first?.stack ?? stack
    part.stackVariants = variants
    part.examples = examples.filter { keys.contains($0.stackKey) }
    // A true leak's explanation is its first check's verdict, which the report keeps only
    // for the whole finding; the other kinds are explained again, with the part's count
    // (and, when none of its members is among the examples kept, the finding's first).
    if kind != .trueLeak, !examples.isEmpty {
      var basis = part
      if basis.examples.isEmpty { basis.examples = [examples[0]] }
      part.explanation = Explanations.finding(basis, firstCheck: nil)
    }
    return part
  }
}
