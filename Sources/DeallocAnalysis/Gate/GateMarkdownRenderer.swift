/// The verdict of `dealloctrace check` as GitHub-flavoured Markdown, for the step summary
/// (`$GITHUB_STEP_SUMMARY`), where it comes right before the full Markdown report.
///
/// It says what the text verdict says, as a table, and leaves the findings in detail to
/// ``MarkdownRenderer``, which follows it, so nothing is written twice. Text from the log
/// or the suppressions file never breaks a line: CommonMark ends a line at a lone `\r`
/// too, which would let a type name close its code span and write Markdown of its own.
public struct GateMarkdownRenderer: Sendable {
  public init() {}

  public func render(_ result: GateResult) -> String {
    let e = Escaping.markdown
    var out: [String] = []
    out.append(
      "## dealloctrace check: \(result.passed ? "passed" : "**failed**")")
    out.append("")
    out.append("| threshold | limit | counted | suppressed | result |")
    out.append("|---|---:|---:|---:|---|")
    for t in result.thresholds {
      let limit = t.limit.map(String.init) ?? "none"
      let verdict = t.passed ? "ok" : "**exceeded by \(t.exceededBy)**"
      out.append(
        "| `--\(t.threshold.optionName)` | \(limit) | \(t.count) | \(t.suppressed) | \(verdict) |")
    }
    let suppressed = result.suppressed
    if !suppressed.isEmpty {
      out.append("")
      out.append("### Suppressed (\(result.suppressedFindingCount))")
      for judged in suppressed {
        let s = judged.suppressedBy!
        let reason = s.reason.isEmpty ? "no reason given" : s.reason
        out.append(
          "- \(e(judged.finding.kind.title)): `\(Escaping.markdownCode(judged.finding.signature.title))`"
            + " ×\(judged.finding.count) by `\(Escaping.markdownCode(s.pattern))`"
            + " (\(e(s.location))): \(e(reason))")
      }
    }
    if !result.unusedSuppressions.isEmpty {
      out.append("")
      out.append("### Unused suppressions (\(result.unusedSuppressions.count))")
      out.append("They matched nothing; remove them or fix their pattern.")
      out.append("")
      for s in result.unusedSuppressions {
        let reason = s.reason.isEmpty ? "" : ": \(e(s.reason))"
        out.append("- \(e(s.location)): `\(Escaping.markdownCode(s.pattern))`\(reason)")
      }
    }
    return out.joined(separator: "\n") + "\n"
  }
}
