import DeallocLog

/// The text report's "Leaks in the whole process": the final census's groups as `leaks`
/// prints them (``CensusLeaksText``); empty for a log without a census.
enum TextProcessLeaksSection {
  static func lines(_ report: Report, maximum: Int, allFrames: Bool) -> [String] {
    CensusLeaksText.lines(
      report.census, maximumFindings: maximum, allFrames: allFrames)
  }
}
