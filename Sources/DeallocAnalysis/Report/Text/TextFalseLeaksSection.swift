/// The text report's false leaks, each explained as the delayed dealloc it was; empty when
/// there are none.
enum TextFalseLeaksSection {
  static func lines(_ report: Report, maximum: Int) -> [String] {
    let falseLeaks = report.falseLeaks
    guard !falseLeaks.isEmpty else { return [] }
    let total = report.summary.falseLeaks
    var out = ["False leaks: delayed deallocs, not leaks (\(total))"]
    for verdict in falseLeaks.prefix(maximum) {
      out.append("  - \(verdict.explanation) (\(verdict.location))")
    }
    let shown = min(falseLeaks.count, maximum)
    if total > shown {
      out.append("  - … and \(total - shown) more")
    }
    return out
  }
}
