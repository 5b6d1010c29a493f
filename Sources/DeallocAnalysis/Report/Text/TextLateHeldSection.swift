/// The text report's late objects that something held past their queue's release, grouped,
/// with the holders seen at the release; empty when there are none.
enum TextLateHeldSection {
  static func lines(_ report: Report, maximumGroups: Int, allFrames: Bool) -> [String] {
    typealias S = RenderingSupport
    guard !report.lateHeld.isEmpty || report.omittedLateHeld > 0 else { return [] }
    var out = [S.lateHeading(report)]
    for group in report.lateHeld.prefix(maximumGroups) {
      let entry = S.lateEntry(group)
      out.append("  - " + entry.head)
      for member in entry.members { out.append("    - " + member) }
      for line in S.lateHolderLines(group, allFrames: allFrames) { out.append("    " + line) }
    }
    if let omitted = S.lateOmitted(report, shown: maximumGroups) {
      out.append("  - " + omitted)
    }
    return out
  }
}
