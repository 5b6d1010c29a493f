import DeallocAnalysis

/// Warnings for the person at the terminal, on standard error.
enum Diagnostics {
  static let maximumPrinted = 20

  /// Prints the report's warnings (capped), one line each.
  static func printWarnings(_ report: Report) {
    for warning in report.warnings.prefix(maximumPrinted) {
      FileHandleStandardError.write("dealloctrace: warning: \(warning)\n")
    }
    let more = report.warnings.count + report.omittedWarnings - maximumPrinted
    if more > 0 {
      FileHandleStandardError.write("dealloctrace: \(more) more warnings\n")
    }
  }
}
