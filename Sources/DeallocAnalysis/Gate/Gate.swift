/// Judges a ``Report`` against ``GateThresholds``, after setting aside the findings that
/// ``SuppressionList`` covers: the library half of `dealloctrace check`.
///
/// Why count from findings rather than the summary: a suppression covers findings, so the
/// counts must come from the same place to add up. Every leaked, stuck, never-released
/// object and every true-leak check belongs to exactly one finding, so without suppressions
/// the counts equal the report's summary.
public struct Gate: Sendable {
  public var thresholds: GateThresholds
  public var suppressions: SuppressionList

  public init(
    thresholds: GateThresholds = GateThresholds(), suppressions: SuppressionList = SuppressionList()
  ) {
    self.thresholds = thresholds
    self.suppressions = suppressions
  }

  /// The verdict on `report`.
  public func evaluate(_ report: Report) -> GateResult {
    var used = Array(repeating: false, count: suppressions.suppressions.count)
    var findings: [GateResult.JudgedFinding] = []
    for finding in report.findings {
      var first: Suppression?
      for (index, suppression) in suppressions.suppressions.enumerated()
      where suppression.matches(finding) {
        used[index] = true
        if first == nil { first = suppression }
      }
      findings.append(
        GateResult.JudgedFinding(finding: finding, suppressedBy: first, failing: false))
    }
    var results: [GateResult.ThresholdResult] = []
    for threshold in GateThresholds.Threshold.allCases {
      let ofKind = findings.filter { $0.finding.kind == threshold.kind }
      let count = ofKind.filter { !$0.isSuppressed }.reduce(0) { $0 + $1.finding.count }
      let suppressed = ofKind.filter(\.isSuppressed).reduce(0) { $0 + $1.finding.count }
      results.append(
        GateResult.ThresholdResult(
          threshold: threshold, limit: thresholds[threshold], count: count, suppressed: suppressed))
    }
    let failingKinds = Set(results.filter { !$0.passed }.map(\.threshold.kind))
    for index in findings.indices where !findings[index].isSuppressed {
      findings[index].failing = failingKinds.contains(findings[index].finding.kind)
    }
    let unused = zip(suppressions.suppressions, used).filter { !$0.1 }.map(\.0)
    return GateResult(
      report: report, thresholds: results, findings: findings, unusedSuppressions: unused)
  }
}
