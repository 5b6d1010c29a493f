import DeallocLog
import TextEscaping

/// The Markdown report's findings: one list item each, with its holder path in a code block
/// and its examples and stack folded in `<details>`, so a pull-request comment stays short.
enum MarkdownFindingsSection {
  static func lines(
    _ report: Report, maximum: Int, workspace: WorkspacePaths?, allFrames: Bool
  ) -> [String] {
    guard !report.findings.isEmpty else {
      return ["**No findings**: nothing leaked, stuck or left in a queue."]
    }
    var out = ["### Findings (\(report.findings.count))"]
    for finding in report.findings.prefix(maximum) {
      out.append("")
      out.append(contentsOf: entry(finding, workspace: workspace, allFrames: allFrames))
    }
    if report.findings.count > maximum {
      out.append("")
      out.append("… \(report.findings.count - maximum) more findings not shown.")
    }
    return out
  }

  /// One finding: its kind, signature, count and id, then its explanation and holders.
  private static func entry(
    _ finding: Finding, workspace: WorkspacePaths?, allFrames: Bool
  ) -> [String] {
    let e = Escaping.markdown
    var out = [
      "- **\(e(finding.kind.title))**: `\(Escaping.markdownCode(finding.signature.title))` ×\(finding.count)"
        + " · `id:\(finding.id)`",
      "  \(e(finding.explanation))",
    ]
    let holders = RenderingSupport.holderLines(finding, allFrames: allFrames)
    if !holders.isEmpty {
      out.append("")
      out.append(contentsOf: MarkdownSection.codeBlock(holders))
    }
    out.append(contentsOf: details(finding, workspace: workspace, allFrames: allFrames))
    return out
  }

  /// The folded examples and caller frames; empty when the finding has neither.
  private static func details(
    _ finding: Finding, workspace: WorkspacePaths?, allFrames: Bool
  ) -> [String] {
    typealias S = RenderingSupport
    let stack = StackListing(finding.stack, limit: S.framesShown, allFrames: allFrames)
    let frames = stack.frames
    guard !frames.isEmpty || stack.folded > 0 || !finding.examples.isEmpty else { return [] }
    var out = ["  <details><summary>examples and stack</summary>", ""]
    for example in finding.examples {
      out.append("  - \(Escaping.markdown(S.example(example, of: finding)))")
    }
    if !frames.isEmpty || stack.folded > 0 {
      out.append("")
      out.append("  ```")
      for frame in frames {
        let shown = workspace?.display(frame) ?? frame
        out.append("  \(Escaping.markdownFenceLine(S.frameLine(shown)))")
      }
      for line in stack.trailingLines { out.append("  " + line) }
      out.append("  ```")
    }
    out.append("  </details>")
    return out
  }
}
