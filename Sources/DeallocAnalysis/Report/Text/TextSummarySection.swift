/// The text report's opening: how much the log held, then one row per state and the checks.
enum TextSummarySection {
  static func lines(_ report: Report) -> [String] {
    typealias S = RenderingSupport
    let summary = report.summary
    var out = [
      "dealloctrace report: \(S.plural(summary.sessions, "session")),"
        + " \(S.plural(summary.enqueued, "object")) enqueued, \(summary.released) released",
      "",
    ]
    for state in ObjectState.allCases {
      out.append(
        "  \(S.pad(S.name(state), 15)) \(S.padLeft(String(summary[state]), 8))   \(S.meaning(state))"
      )
    }
    out.append(
      "  \(S.pad("checks", 15)) \(S.padLeft(String(summary.checks), 8))   "
        + "\(summary.falseLeaks) false leak\(summary.falseLeaks == 1 ? "" : "s") (delayed dealloc),"
        + " \(S.trueLeaksPhrase(summary))")
    out.append("  \(S.findingsSentence(report))")
    return out
  }
}
