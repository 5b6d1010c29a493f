import DeallocLog

/// The text report's latency: one line per distribution with its percentiles.
enum TextLatencySection {
  static func lines(_ report: Report) -> [String] {
    [
      "Latency",
      line("enqueue → release", report.latency.enqueueToRelease),
      line("release → dealloc (late)", report.latency.releaseToDealloc),
    ]
  }

  private static func line(_ title: String, _ distribution: LatencyDistribution) -> String {
    typealias T = TimeFormatting
    let head = "  " + RenderingSupport.pad(title, 26)
    guard let stats = distribution.stats else { return head + "no samples" }
    let exact = distribution.isExact ? "" : " (approximate)"
    return head
      + "n=\(stats.count)  p50 \(T.format(stats.p50))  p90 \(T.format(stats.p90))"
      + "  p99 \(T.format(stats.p99))  max \(T.format(stats.max))\(exact)"
  }
}
