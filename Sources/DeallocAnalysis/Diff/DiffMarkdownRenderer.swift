import DeallocLog
import TextEscaping

/// `dealloctrace diff` as GitHub-flavoured Markdown, for a pull-request comment or the
/// job's step summary: a headline a reviewer can act on, then tables of what changed.
///
/// Everything from the runs is escaped as in ``MarkdownRenderer`` (code spans cannot be
/// left by a hostile type name, prose cannot start a heading or a table).
public struct DiffMarkdownRenderer: Sendable {
  /// Names the sides' inputs relative to the checkout; `nil` keeps them as they are.
  public var workspace: WorkspacePaths?

  public init(workspace: WorkspacePaths? = nil) {
    self.workspace = workspace
  }

  public func render(_ diff: FindingsDiff) -> String {
    let e = Escaping.markdown
    var out: [String] = []
    out.append(
      diff.hasNewFindings
        ? "## dealloctrace diff: **\(RenderingSupport.plural(diff.new.count, "new finding"))**"
        : "## dealloctrace diff: no new findings")
    out.append("")
    out.append(e(DiffSummary.sentence(diff)) + ".")
    out.append("")
    out.append("- base: \(e(describe(diff.base)))")
    out.append("- head: \(e(describe(diff.head)))")
    func table(_ title: String, _ rows: [(FindingDigest, String)]) {
      guard !rows.isEmpty else { return }
      out.append("")
      out.append("### \(title) (\(rows.count))")
      out.append("")
      out.append("| id | kind | finding | count |")
      out.append("|---|---|---|---:|")
      for (finding, count) in rows {
        out.append(
          "| `\(finding.id)` | \(e(finding.kind.title)) | `\(Escaping.markdownCode(finding.title))`"
            + " | \(count) |")
      }
    }
    table("New", diff.new.map { ($0, "\($0.count)") })
    table("Gone", diff.gone.map { ($0, "\($0.count) in base") })
    table("Changed in count", diff.changed.map { ($0.head, "\($0.base.count) → \($0.head.count)") })
    for (title, changes) in [
      ("False leaks that appeared", diff.falseLeaksAppeared),
      ("False leaks that disappeared", diff.falseLeaksDisappeared),
    ] where !changes.isEmpty {
      out.append("")
      out.append("### \(title) (\(changes.count))")
      out.append("")
      out.append("Delayed deallocs, not leaks.")
      out.append("")
      for change in changes {
        out.append("- \(e(DiffSummary.falseLeak(change))) ×\(max(change.base, change.head))")
      }
    }
    return out.joined(separator: "\n") + "\n"
  }

  private func describe(_ side: DiffSide) -> String {
    let inputs = side.inputs.map { workspace?.display($0) ?? $0 }
    return inputs.joined(separator: ", ") + (side.isSavedReport ? " (saved report)" : " (logs)")
  }
}
