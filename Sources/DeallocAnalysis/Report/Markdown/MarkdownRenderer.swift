import DeallocLog
import TextEscaping

/// The report as GitHub-flavoured Markdown, for pull-request comments and CI step summaries.
///
/// Short by design: the sections of ``ReportSection``, each from its own `Markdown…Section`,
/// with stacks folded in `<details>` and only the largest types. Everything from the log is
/// escaped, so a type name like `Array<Node>` or a label with `|` cannot break the page.
public struct MarkdownRenderer: ReportRenderer {
  public var maximumFindings = 20
  public var maximumFalseLeaks = 10
  /// Groups of late objects held past their release shown in full; the rest are counted.
  public var maximumLateGroups = 10
  public var maximumTypes = 15
  /// Names source files relative to the checkout; `nil` keeps them as they are.
  public var workspace: WorkspacePaths?
  /// Every frame of a stack as recorded, instead of the program's first and the rest
  /// folded into one line (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init() {}

  public func render(_ report: Report) -> String {
    let lines = ReportSection.assemble { section in
      switch section {
      case .summary: MarkdownSummarySection.lines(report)
      case .findings:
        MarkdownFindingsSection.lines(
          report, maximum: maximumFindings, workspace: workspace, allFrames: allFrames)
      case .processLeaks: MarkdownProcessLeaksSection.lines(report, maximum: maximumFindings)
      case .holderHint: HolderHint.text(report).map { ["**Hint:** \(Escaping.markdown($0))"] } ?? []
      case .lateHeld: MarkdownLateHeldSection.lines(report, maximumGroups: maximumLateGroups)
      case .falseLeaks: MarkdownFalseLeaksSection.lines(report, maximum: maximumFalseLeaks)
      case .latency: MarkdownLatencySection.lines(report)
      case .peakDepth: MarkdownPeakDepthSection.lines(report)
      case .types: MarkdownTypeTableSection.lines(report, maximum: maximumTypes)
      case .input: MarkdownInputSection.lines(report)
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
