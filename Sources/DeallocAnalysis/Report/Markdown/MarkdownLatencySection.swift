import DeallocLog

/// The Markdown report's latency: a table with one row per distribution.
enum MarkdownLatencySection {
  static func lines(_ report: Report) -> [String] {
    [
      "### Latency",
      "",
      "| | n | p50 | p90 | p99 | max |",
      "|---|---:|---:|---:|---:|---:|",
      row("enqueue → release", report.latency.enqueueToRelease),
      row("release → dealloc (late)", report.latency.releaseToDealloc),
    ]
  }

  private static func row(_ title: String, _ distribution: LatencyDistribution) -> String {
    typealias T = TimeFormatting
    guard let s = distribution.stats else { return "| \(title) | 0 | | | | |" }
    return "| \(title) | \(s.count) | \(T.format(s.p50)) | \(T.format(s.p90)) | \(T.format(s.p99))"
      + " | \(T.format(s.max)) |"
  }
}
