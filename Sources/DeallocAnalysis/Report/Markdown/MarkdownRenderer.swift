/// The report as GitHub-flavoured Markdown, for pull-request comments and CI step summaries.
///
/// Short by design: a summary table, the findings (stacks folded in `<details>`), the false
/// leaks explained, latency, the peak depth and the largest types. Everything from the log
/// is escaped, so a type name like `Array<Node>` or a label with `|` cannot break the page.
public struct MarkdownRenderer: ReportRenderer {
  public var maximumFindings = 20
  public var maximumFalseLeaks = 10
  /// Groups of late objects held past their release shown in full; the rest are counted.
  public var maximumLateGroups = 10
  public var maximumTypes = 15
  /// Names source files relative to the checkout; `nil` keeps them as they are.
  public var workspace: WorkspacePaths?

  public init() {}

  public func render(_ report: Report) -> String {
    typealias S = RenderingSupport
    typealias T = TimeFormatting
    let e = Escaping.markdown
    var out: [String] = []
    let summary = report.summary
    out.append("## dealloctrace report")
    out.append("")
    out.append(
      "\(S.plural(summary.sessions, "session")), \(S.plural(summary.enqueued, "object")) enqueued,"
        + " \(summary.released) released.")
    out.append("")
    out.append("| state | objects | meaning |")
    out.append("|---|---:|---|")
    for state in ObjectState.allCases {
      out.append("| \(S.name(state)) | \(summary[state]) | \(S.meaning(state)) |")
    }
    out.append(
      "| checks | \(summary.checks) | \(S.plural(summary.falseLeaks, "false leak")) (delayed dealloc),"
        + " \(S.plural(summary.trueLeaks, "true leak")) |")
    out.append("")

    if report.findings.isEmpty {
      out.append("**No findings**: nothing leaked, stuck or left in a queue.")
    } else {
      out.append("### Findings (\(report.findings.count))")
      for finding in report.findings.prefix(maximumFindings) {
        out.append("")
        out.append(
          "- **\(e(finding.kind.title))**: `\(Escaping.markdownCode(finding.signature.title))` ×\(finding.count)"
            + " · `id:\(finding.id)`")
        out.append("  \(e(finding.explanation))")
        let holders = S.holderLines(finding)
        if !holders.isEmpty {
          out.append("")
          out.append("  ```")
          for line in holders { out.append("  \(Escaping.markdownFenceLine(line))") }
          out.append("  ```")
        }
        let (frames, omitted) = S.callerFrames(finding.stack)
        if !frames.isEmpty || !finding.examples.isEmpty {
          out.append("  <details><summary>examples and stack</summary>")
          out.append("")
          for example in finding.examples { out.append("  - \(e(S.example(example)))") }
          if !frames.isEmpty {
            out.append("")
            out.append("  ```")
            for frame in frames {
              let shown = workspace?.display(frame) ?? frame
              out.append("  \(Escaping.markdownFenceLine(S.frameLine(shown)))")
            }
            if omitted > 0 { out.append("  … \(omitted) more frames") }
            out.append("  ```")
          }
          out.append("  </details>")
        }
      }
      if report.findings.count > maximumFindings {
        out.append("")
        out.append("… \(report.findings.count - maximumFindings) more findings not shown.")
      }
    }
    if let hint = HolderHint.text(report) {
      out.append("")
      out.append("**Hint:** \(e(hint))")
    }
    if !report.lateHeld.isEmpty || report.omittedLateHeld > 0 {
      out.append("")
      out.append("### \(e(S.lateHeading(report)))")
      out.append("")
      out.append(e(S.lateMeaning))
      for group in report.lateHeld.prefix(maximumLateGroups) {
        let entry = S.lateEntry(group)
        out.append("")
        out.append("- \(e(entry.head))")
        for member in entry.members { out.append("  - \(e(member))") }
        out.append("")
        out.append("  ```")
        for line in S.lateHolderLines(group) { out.append("  \(Escaping.markdownFenceLine(line))") }
        out.append("  ```")
      }
      if let omitted = S.lateOmitted(report, shown: maximumLateGroups) {
        out.append("")
        out.append("- \(e(omitted))")
      }
    }

    let falseLeaks = report.falseLeaks
    if !falseLeaks.isEmpty {
      out.append("")
      out.append("### False leaks: delayed deallocs (\(summary.falseLeaks))")
      out.append("")
      for verdict in falseLeaks.prefix(maximumFalseLeaks) {
        out.append("- \(e(verdict.explanation))")
      }
      let shown = min(falseLeaks.count, maximumFalseLeaks)
      if summary.falseLeaks > shown { out.append("- … and \(summary.falseLeaks - shown) more") }
    }

    out.append("")
    out.append("### Latency")
    out.append("")
    out.append("| | n | p50 | p90 | p99 | max |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for (title, distribution) in [
      ("enqueue → release", report.latency.enqueueToRelease),
      ("release → dealloc (late)", report.latency.releaseToDealloc),
    ] {
      if let s = distribution.stats {
        out.append(
          "| \(title) | \(s.count) | \(T.format(s.p50)) | \(T.format(s.p90)) | \(T.format(s.p99))"
            + " | \(T.format(s.max)) |")
      } else {
        out.append("| \(title) | 0 | | | | |")
      }
    }
    if let peak = report.peak {
      out.append("")
      out.append(
        "**Peak queue depth:** \(S.plural(peak.depth, "object")) in queue `\(Escaping.markdownCode(peak.queue))`"
          + " at \(T.format(peak.at)) (session \(peak.session + 1)).")
    }

    if !report.types.isEmpty {
      out.append("")
      out.append("### Types")
      out.append("")
      out.append(
        "| type | enqueued | freed | late | leaked | pending | stuck | never released |"
          + " false leaks | true leaks |")
      out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
      for row in report.types.prefix(maximumTypes) {
        let values =
          [row.enqueued] + ObjectState.allCases.map { row[$0] } + [row.falseLeaks, row.trueLeaks]
        out.append(
          "| `\(Escaping.markdownCode(row.type))` | "
            + values.map(String.init).joined(separator: " | ") + " |")
      }
      if report.types.count > maximumTypes {
        out.append("")
        out.append("… \(report.types.count - maximumTypes) more types.")
      }
    }

    let incomplete = report.sessions.filter { !$0.isComplete }
    if !incomplete.isEmpty || !report.warnings.isEmpty || report.omittedSessions > 0 {
      out.append("")
      out.append("### Input")
      out.append("")
      for session in incomplete {
        out.append("- \(e(S.identity(session))): \(e(S.ending(session)))")
      }
      if report.omittedSessions > 0 {
        out.append(
          "- \(S.plural(report.omittedSessions, "more session")) counted in the summary but"
            + " not listed (the first \(report.sessions.count) are)")
      }
      for warning in report.warnings.prefix(20) {
        out.append("- warning: \(e(warning.description))")
      }
      let more = report.warnings.count + report.omittedWarnings - min(20, report.warnings.count)
      if more > 0 { out.append("- … \(more) more warnings") }
    }
    return out.joined(separator: "\n") + "\n"
  }
}
