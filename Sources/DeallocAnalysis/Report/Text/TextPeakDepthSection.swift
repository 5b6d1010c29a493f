import DeallocLog

/// The text report's peak queue depth: memory the queue held, which no leak tool sees.
enum TextPeakDepthSection {
  static func lines(_ report: Report) -> [String] {
    guard let peak = report.peak else { return ["Peak queue depth: no object was enqueued."] }
    return [
      "Peak queue depth: \(RenderingSupport.plural(peak.depth, "object")) in queue"
        + " '\(peak.queue)' at \(TimeFormatting.format(peak.at)) (session \(peak.session + 1))."
        + " That memory is held by the queue, out of every leak tool's sight."
    ]
  }
}
