/// The text report's account of its input: every session listed with how it ended, then the
/// warnings the reader raised, if any.
enum TextInputSection {
  static func lines(_ report: Report) -> [String] {
    var out = ["Sessions"]
    for session in report.sessions {
      out.append("  \(RenderingSupport.identity(session)): \(RenderingSupport.ending(session))")
    }
    if report.omittedSessions > 0 {
      out.append("  … \(report.omittedSessions) more (counted above, not listed)")
    }
    if !report.warnings.isEmpty {
      out.append("")
      out.append("Warnings (\(report.warnings.count + report.omittedWarnings))")
      for warning in report.warnings { out.append("  \(warning)") }
      if report.omittedWarnings > 0 { out.append("  … \(report.omittedWarnings) more") }
    }
    return out
  }
}
