import DeallocLog
import TextEscaping

/// The Markdown report's "Leaks in the whole process": a heading and the `leaks`-style
/// lines in a code block (``CensusLeaksText``); empty for a log without a census.
enum MarkdownProcessLeaksSection {
  static func lines(_ report: Report, maximum: Int, allFrames: Bool) -> [String] {
    let lines = CensusLeaksText.lines(
      report.census, maximumFindings: maximum, allFrames: allFrames)
    guard !lines.isEmpty else { return [] }
    return ["## Leaks in the whole process", "", "```"]
      + lines.dropFirst().map(Escaping.markdownFenceLine) + ["```"]
  }
}
