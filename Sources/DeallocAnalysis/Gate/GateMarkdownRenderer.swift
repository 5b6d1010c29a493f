import DeallocLog
import TextEscaping

/// The verdict of `dealloctrace check` as GitHub-flavoured Markdown, for the step summary
/// (`$GITHUB_STEP_SUMMARY`), where it comes right before the full Markdown report.
///
/// It says what the text verdict says, as a table, and leaves the findings in detail to
/// ``MarkdownRenderer``, which follows it, so nothing is written twice. Text from the log
/// or the suppressions file never breaks a line: CommonMark ends a line at a lone `\r`
/// too, which would let a type name close its code span and write Markdown of its own.
public struct GateMarkdownRenderer: Sendable {
  /// Names the suppressions file and the baseline relative to the checkout, as the rest of
  /// the step summary names files; `nil` keeps them as given on the command line.
  public var workspace: WorkspacePaths?

  public init(workspace: WorkspacePaths? = nil) {
    self.workspace = workspace
  }

  private func path(_ path: String) -> String {
    workspace?.display(path) ?? path
  }

  private func location(_ suppression: Suppression) -> String {
    "\(path(suppression.file)):\(suppression.line)"
  }

  public func render(_ result: GateResult) -> String {
    let e = Escaping.markdown
    var out: [String] = []
    out.append(
      "## dealloctrace check: \(result.passed ? "passed" : "**failed**")")
    out.append("")
    out.append(
      e(RenderingSupport.findingsSentence(result.report))
        + "; the counts below are objects and checks.")
    out.append("")
    out.append("| threshold | limit | counted | suppressed | result |")
    out.append("|---|---:|---:|---:|---|")
    for t in result.thresholds {
      let limit = t.limit.map(String.init) ?? "none"
      let verdict = t.passed ? "ok" : "**exceeded by \(t.exceededBy)**"
      out.append(
        "| `--\(t.threshold.optionName)` | \(limit) | \(t.count) | \(t.suppressed) | \(verdict) |")
    }
    if let baseline = result.baseline {
      appendBaseline(result, baseline, to: &out)
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
            + " ×\(judged.finding.count) `id:\(judged.finding.id)` by `\(Escaping.markdownCode(s.pattern))`"
            + " (\(e(location(s)))): \(e(reason))")
      }
    }
    if !result.unusedSuppressions.isEmpty {
      out.append("")
      out.append("### Unused suppressions (\(result.unusedSuppressions.count))")
      out.append("They matched nothing; remove them or fix their pattern.")
      out.append("")
      for s in result.unusedSuppressions {
        let reason = s.reason.isEmpty ? "" : ": \(e(s.reason))"
        out.append("- \(e(location(s))): `\(Escaping.markdownCode(s.pattern))`\(reason)")
      }
    }
    return out.joined(separator: "\n") + "\n"
  }

  /// The findings new against the baseline, the known ones and the fixed entries.
  private func appendBaseline(_ result: GateResult, _ baseline: Baseline, to out: inout [String]) {
    let e = Escaping.markdown
    func line(_ finding: Finding, _ note: String) -> String {
      "- \(e(finding.kind.title)): `\(Escaping.markdownCode(finding.signature.title))` ×\(finding.count)"
        + " `id:\(finding.id)`\(note)"
    }
    let counted = result.counted.filter { $0.baseline != nil }
    out.append("")
    out.append("### New or grown since the baseline (\(counted.count))")
    out.append("")
    if counted.isEmpty {
      out.append(
        "None: every finding is in the baseline `\(Escaping.markdownCode(path(baseline.path)))`.")
    }
    for judged in counted {
      let note: String
      switch judged.baseline {
      case .grown(let count): note = ": **grown** from ×\(count)"
      default: note = judged.failing ? ": **new**" : ": new, within its limit"
      }
      out.append(line(judged.finding, note))
    }
    let known = result.known
    if !known.isEmpty {
      out.append("")
      out.append(
        "### Known, in the baseline `\(Escaping.markdownCode(path(baseline.path)))` (\(known.count))"
      )
      out.append("")
      for judged in known { out.append(line(judged.finding, "")) }
    }
    let fixed = result.fixedBaselineEntries
    if !fixed.isEmpty {
      out.append("")
      out.append("### Fixed: remove from the baseline (\(fixed.count))")
      out.append("")
      for entry in fixed {
        out.append(
          "- `id:\(entry.id)` \(e(entry.kind.title)): `\(Escaping.markdownCode(entry.title))`"
            + " (baseline ×\(entry.count))")
      }
    }
  }
}
