/// The Markdown report's opening: how much the log held, then a table of the states and the
/// checks.
enum MarkdownSummarySection {
  static func lines(_ report: Report) -> [String] {
    typealias S = RenderingSupport
    let summary = report.summary
    var out = [
      "## dealloctrace report",
      "",
      "\(S.plural(summary.sessions, "session")), \(S.plural(summary.enqueued, "object")) enqueued,"
        + " \(summary.released) released.",
      "",
      "| state | objects | meaning |",
      "|---|---:|---|",
    ]
    for state in ObjectState.allCases {
      out.append("| \(S.name(state)) | \(summary[state]) | \(S.meaning(state)) |")
    }
    out.append(
      "| checks | \(summary.checks) | \(S.plural(summary.falseLeaks, "false leak")) (delayed dealloc),"
        + " \(S.trueLeaksPhrase(summary)) |")
    out += ["", S.findingsSentence(report) + "."]
    return out
  }
}
