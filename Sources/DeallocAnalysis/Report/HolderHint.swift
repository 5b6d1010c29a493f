/// The one sentence a report adds about holder paths, at most once per report:
/// - recorded without holders, with something a path would explain (a leaked or late
///   object, a true leak): how to rerun with holders on;
/// - recorded with holders, but the recorder's caps skipped scans: how many findings lack a
///   path, and why.
///
/// Why once, and not under every finding: the advice is the same for all of them, and a
/// report with fifty leaks must not say it fifty times.
enum HolderHint {
  /// The variable that turns holder scanning on in the traced process.
  static let variable = "DEALLOCTRACE_HOLDERS=1"

  /// The hint for `report`, or `nil` when there is nothing to say.
  static func text(_ report: Report) -> String? {
    let explainable = report.findings.filter { $0.kind == .leaked || $0.kind == .trueLeak }
    if !report.holders.recorded {
      guard !explainable.isEmpty || report.summary.late > 0 else { return nil }
      return "Who still holds them? Rerun with \(variable) next to DEALLOCTRACE_LOG: every"
        + " leaked or late object and every true leak then comes with the references that"
        + " held it (a path from a global, a thread's stack, or a retain cycle)."
    }
    guard report.holders.skippedScans > 0 else { return nil }
    let missing = explainable.filter { $0.holders == nil }.count
    let skipped = RenderingSupport.plural(report.holders.skippedScans, "holder scan")
    let why =
      "the recorder skipped \(skipped) (it caps scans per session and per finding"
      + " signature, and counts the rest in its end record)"
    guard missing > 0 else { return "Every finding has a holder path, but \(why)." }
    return "\(RenderingSupport.plural(missing, "finding")) \(missing == 1 ? "has" : "have") no"
      + " holder path: \(why)."
  }
}
