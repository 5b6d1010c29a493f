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
    let e = MarkdownRenderer.escape
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
          "- \(e(judged.finding.kind.title)): `\(Self.code(judged.finding.signature.title))`"
            + " ×\(judged.finding.count) `id:\(judged.finding.id)` by `\(Self.code(s.pattern))`"
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
        out.append("- \(e(location(s))): `\(Self.code(s.pattern))`\(reason)")
      }
    }
    return out.joined(separator: "\n") + "\n"
  }

  /// The findings new against the baseline, the known ones and the fixed entries.
  private func appendBaseline(_ result: GateResult, _ baseline: Baseline, to out: inout [String]) {
    let e = MarkdownRenderer.escape
    func line(_ finding: Finding, _ note: String) -> String {
      "- \(e(finding.kind.title)): `\(Self.code(finding.signature.title))` ×\(finding.count)"
        + " `id:\(finding.id)`\(note)"
    }
    let counted = result.counted.filter { $0.baseline != nil }
    out.append("")
    out.append("### New or grown since the baseline (\(counted.count))")
    out.append("")
    if counted.isEmpty {
      out.append("None: every finding is in the baseline `\(Self.code(path(baseline.path)))`.")
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
      out.append("### Known, in the baseline `\(Self.code(path(baseline.path)))` (\(known.count))")
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
          "- `id:\(entry.id)` \(e(entry.kind.title)): `\(Self.code(entry.title))`"
            + " (baseline ×\(entry.count))")
      }
    }
  }

  /// Text for a code span: control characters (line breaks included) become spaces first.
  static func code(_ text: String) -> String {
    var flat = ""
    for scalar in text.unicodeScalars {
      let control =
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}"
        || scalar == "\u{2029}"
      flat.unicodeScalars.append(control ? " " : scalar)
    }
    return MarkdownRenderer.code(flat)
  }
}
