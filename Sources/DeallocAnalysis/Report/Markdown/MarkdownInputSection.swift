import DeallocLog
import TextEscaping

/// The Markdown report's account of its input, only when there is something to say: the
/// sessions that did not end cleanly, how many sessions were not listed, and the warnings.
enum MarkdownInputSection {
  /// Warnings listed; the rest are counted.
  static let maximumWarnings = 20

  static func lines(_ report: Report) -> [String] {
    typealias S = RenderingSupport
    let e = Escaping.markdown
    let incomplete = report.sessions.filter { !$0.isComplete }
    guard !incomplete.isEmpty || !report.warnings.isEmpty || report.omittedSessions > 0 else {
      return []
    }
    var out = ["### Input", ""]
    for session in incomplete {
      out.append("- \(e(S.identity(session))): \(e(S.ending(session)))")
    }
    if report.omittedSessions > 0 {
      out.append(
        "- \(S.plural(report.omittedSessions, "more session")) counted in the summary but"
          + " not listed (the first \(report.sessions.count) are)")
    }
    let shown = report.warnings.prefix(maximumWarnings)
    for warning in shown {
      out.append("- warning: \(e(warning.description))")
    }
    let more = report.warnings.count + report.omittedWarnings - shown.count
    if more > 0 { out.append("- … \(more) more warnings") }
    return out
  }
}
