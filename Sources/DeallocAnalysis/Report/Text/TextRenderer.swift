/// The default report: plain text for a terminal or a CI log.
///
/// Order follows what a reader needs first: the summary per state, then findings most
/// serious first, then the false leaks explained (so nobody chases them), then latency,
/// peak depth, the per-type table, sessions and warnings.
public struct TextRenderer: ReportRenderer {
  /// Findings shown in full; the rest are counted.
  public var maximumFindings = 20
  /// False leaks explained; the rest are counted.
  public var maximumFalseLeaks = 10
  /// Groups of late objects held past their release shown in full; the rest are counted.
  public var maximumLateGroups = 10
  /// Types in the table.
  public var maximumTypes = 25

  public init() {}

  public func render(_ report: Report) -> String {
    typealias S = RenderingSupport
    typealias T = TimeFormatting
    var out: [String] = []
    let summary = report.summary
    out.append(
      "dealloctrace report: \(S.plural(summary.sessions, "session")),"
        + " \(S.plural(summary.enqueued, "object")) enqueued, \(summary.released) released")
    out.append("")
    for state in ObjectState.allCases {
      out.append(
        "  \(S.pad(S.name(state), 15)) \(S.padLeft(String(summary[state]), 8))   \(S.meaning(state))"
      )
    }
    out.append(
      "  \(S.pad("checks", 15)) \(S.padLeft(String(summary.checks), 8))   "
        + "\(summary.falseLeaks) false leak\(summary.falseLeaks == 1 ? "" : "s") (delayed dealloc),"
        + " \(summary.trueLeaks) true leak\(summary.trueLeaks == 1 ? "" : "s")")

    out.append("")
    if report.findings.isEmpty {
      out.append("No findings: nothing leaked, stuck or left in a queue.")
    } else {
      out.append("Findings (\(report.findings.count), most serious first)")
      for (number, finding) in report.findings.prefix(maximumFindings).enumerated() {
        out.append("")
        out.append(
          "\(number + 1). \(finding.kind.title.uppercased()): \(finding.signature.title)"
            + " (×\(finding.count))")
        out.append("   id:\(finding.id)")
        out.append("   \(finding.explanation)")
        for example in finding.examples {
          out.append("   - \(S.example(example))")
        }
        if finding.count > finding.examples.count {
          out.append("   - … and \(finding.count - finding.examples.count) more")
        }
        for line in S.holderLines(finding) { out.append("   " + line) }
        let (frames, omitted) = S.callerFrames(finding.stack)
        if !frames.isEmpty {
          out.append("   enqueued at:")
          for frame in frames { out.append("     \(S.frameLine(frame))") }
          if omitted > 0 { out.append("     … \(omitted) more frames") }
        }
      }
      if report.findings.count > maximumFindings {
        out.append("")
        out.append("… \(report.findings.count - maximumFindings) more findings not shown")
      }
    }
    if let hint = HolderHint.text(report) {
      out.append("")
      out.append(hint)
    }
    if !report.lateHeld.isEmpty || report.omittedLateHeld > 0 {
      out.append("")
      out.append(S.lateHeading(report))
      for group in report.lateHeld.prefix(maximumLateGroups) {
        let entry = S.lateEntry(group)
        out.append("  - " + entry.head)
        for member in entry.members { out.append("    - " + member) }
        for line in S.lateHolderLines(group) { out.append("    " + line) }
      }
      if let omitted = S.lateOmitted(report, shown: maximumLateGroups) {
        out.append("  - " + omitted)
      }
    }

    let falseLeaks = report.falseLeaks
    if !falseLeaks.isEmpty {
      out.append("")
      out.append("False leaks: delayed deallocs, not leaks (\(summary.falseLeaks))")
      for verdict in falseLeaks.prefix(maximumFalseLeaks) {
        out.append("  - \(verdict.explanation) (\(verdict.location))")
      }
      if summary.falseLeaks > min(falseLeaks.count, maximumFalseLeaks) {
        out.append(
          "  - … and \(summary.falseLeaks - min(falseLeaks.count, maximumFalseLeaks)) more")
      }
    }

    out.append("")
    out.append("Latency")
    out.append(latencyLine("enqueue → release", report.latency.enqueueToRelease))
    out.append(latencyLine("release → dealloc (late)", report.latency.releaseToDealloc))

    out.append("")
    if let peak = report.peak {
      out.append(
        "Peak queue depth: \(S.plural(peak.depth, "object")) in queue '\(peak.queue)' at"
          + " \(T.format(peak.at)) (session \(peak.session + 1)). That memory is held by the queue,"
          + " out of every leak tool's sight.")
    } else {
      out.append("Peak queue depth: no object was enqueued.")
    }

    if !report.types.isEmpty {
      out.append("")
      out.append("Types")
      let shown = Array(report.types.prefix(maximumTypes))
      let width = max(4, min(60, shown.map(\.type.count).max() ?? 4))
      let columns = [
        "enqueued", "freed", "late", "leaked", "pending", "stuck", "never", "false", "true",
      ]
      out.append(
        "  \(S.pad("type", width))" + columns.map { " " + S.padLeft($0, 8) }.joined())
      for row in shown {
        let values =
          [row.enqueued] + ObjectState.allCases.map { row[$0] } + [row.falseLeaks, row.trueLeaks]
        out.append(
          "  \(S.pad(row.type, width))" + values.map { " " + S.padLeft(String($0), 8) }.joined())
      }
      if report.types.count > maximumTypes {
        out.append("  … \(report.types.count - maximumTypes) more types")
      }
    }

    out.append("")
    out.append("Sessions")
    for session in report.sessions {
      out.append("  \(S.identity(session)): \(S.ending(session))")
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
    return out.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }

  private func latencyLine(_ title: String, _ distribution: LatencyDistribution) -> String {
    typealias T = TimeFormatting
    let head = "  " + RenderingSupport.pad(title, 26)
    guard let stats = distribution.stats else { return head + "no samples" }
    let exact = distribution.isExact ? "" : " (approximate)"
    return head
      + "n=\(stats.count)  p50 \(T.format(stats.p50))  p90 \(T.format(stats.p90))"
      + "  p99 \(T.format(stats.p99))  max \(T.format(stats.max))\(exact)"
  }
}
