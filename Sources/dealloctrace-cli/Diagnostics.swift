import DeallocAnalysis

/// Warnings for the person at the terminal, on standard error.
enum Diagnostics {
  static let maximumPrinted = 20

  /// Prints the report's warnings (capped), one line each.
  static func printWarnings(_ report: Report) {
    printWarnings(report.warnings.map(\.description), omitted: report.omittedWarnings)
  }

  /// Prints `warnings` (capped at ``maximumPrinted``), one line each, and how many more
  /// there were: `omitted` counts those already dropped by the collector.
  static func printWarnings(_ warnings: [String], omitted: Int = 0) {
    for warning in warnings.prefix(maximumPrinted) {
      StandardError.line("warning: \(warning)")
    }
    let more = warnings.count + omitted - min(maximumPrinted, warnings.count)
    if more > 0 {
      StandardError.line("\(more) more warnings")
    }
  }
}
