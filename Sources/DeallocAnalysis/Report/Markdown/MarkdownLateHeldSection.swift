import DeallocLog
import TextEscaping

/// The Markdown report's late objects that something held past their queue's release,
/// grouped, with the holders seen at the release; empty when there are none.
enum MarkdownLateHeldSection {
  static func lines(_ report: Report, maximumGroups: Int, allFrames: Bool) -> [String] {
    typealias S = RenderingSupport
    let e = Escaping.markdown
    guard !report.lateHeld.isEmpty || report.omittedLateHeld > 0 else { return [] }
    var out = ["### \(e(S.lateHeading(report)))", "", e(S.lateMeaning)]
    for group in report.lateHeld.prefix(maximumGroups) {
      let entry = S.lateEntry(group)
      out.append("")
      out.append("- \(e(entry.head))")
      for member in entry.members { out.append("  - \(e(member))") }
      out.append("")
      out.append(
        contentsOf: MarkdownSection.codeBlock(S.lateHolderLines(group, allFrames: allFrames)))
    }
    if let omitted = S.lateOmitted(report, shown: maximumGroups) {
      out.append("")
      out.append("- \(e(omitted))")
    }
    return out
  }
}
