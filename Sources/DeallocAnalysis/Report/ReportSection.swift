/// The sections of the text and Markdown reports, in the order a reader needs them: the
/// summary per state, the findings most serious first, the leaks of the whole process (a
/// census), the holder hint, the late objects held
/// past their release, the false leaks explained (so nobody chases them), latency, the peak
/// depth, the per-type table, and what the input was like (sessions and warnings).
///
/// Why one list: both formats must tell the same story in the same order, and a section added
/// to one and forgotten in the other is a compile error in the `switch` of each renderer. The
/// HTML page keeps its own order, since it opens with charts these two formats do not have.
enum ReportSection: CaseIterable {
  case summary
  case findings
  case processLeaks
  case holderHint
  case lateHeld
  case falseLeaks
  case latency
  case peakDepth
  case types
  case input

  /// The lines of every section in order, one blank line between two sections; a section
  /// with nothing to say (an empty array) is left out with its blank line.
  static func assemble(_ lines: (ReportSection) -> [String]) -> [String] {
    RenderingSupport.separated(allCases.map(lines))
  }
}
