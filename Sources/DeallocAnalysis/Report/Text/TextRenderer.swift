import DeallocLog
import TextEscaping

/// The default report: plain text for a terminal or a CI log.
///
/// The sections come in ``ReportSection``'s order, each from its own `Text…Section`; every
/// line is escaped for a terminal here, once, so no section can forget it.
public struct TextRenderer: ReportRenderer {
  /// Findings shown in full; the rest are counted.
  public var maximumFindings = 20
  /// False leaks explained; the rest are counted.
  public var maximumFalseLeaks = 10
  /// Groups of late objects held past their release shown in full; the rest are counted.
  public var maximumLateGroups = 10
  /// Types in the table.
  public var maximumTypes = 25
  /// Every frame of a stack as recorded, instead of the program's first and the rest
  /// folded into one line (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init() {}

  public func render(_ report: Report) -> String {
    let lines = ReportSection.assemble { section in
      switch section {
      case .summary: TextSummarySection.lines(report)
      case .findings:
        TextFindingsSection.lines(
          report, maximum: maximumFindings, allFrames: allFrames)
      case .processLeaks: TextProcessLeaksSection.lines(report, maximum: maximumFindings)
      case .holderHint: HolderHint.text(report).map { [$0] } ?? []
      case .lateHeld: TextLateHeldSection.lines(report, maximumGroups: maximumLateGroups)
      case .falseLeaks: TextFalseLeaksSection.lines(report, maximum: maximumFalseLeaks)
      case .latency: TextLatencySection.lines(report)
      case .peakDepth: TextPeakDepthSection.lines(report)
      case .types: TextTypeTableSection.lines(report, maximum: maximumTypes)
      case .input: TextInputSection.lines(report)
      }
    }
    return lines.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }
}
