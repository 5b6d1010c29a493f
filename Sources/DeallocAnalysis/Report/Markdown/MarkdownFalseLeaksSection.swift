import DeallocLog
import TextEscaping

/// The Markdown report's false leaks, each explained as the delayed dealloc it was; empty
/// when there are none.
enum MarkdownFalseLeaksSection {
  static func lines(_ report: Report, maximum: Int) -> [String] {
    let falseLeaks = report.falseLeaks
    guard !falseLeaks.isEmpty else { return [] }
    let total = report.summary.falseLeaks
    var out = ["### False leaks: delayed deallocs (\(total))", ""]
    for verdict in falseLeaks.prefix(maximum) {
      out.append("- \(Escaping.markdown(verdict.explanation))")
    }
    let shown = min(falseLeaks.count, maximum)
    if total > shown { out.append("- … and \(total - shown) more") }
    return out
  }
}
