import DeallocLog
import TextEscaping

/// The Markdown report's peak queue depth; empty when no object was enqueued.
enum MarkdownPeakDepthSection {
  static func lines(_ report: Report) -> [String] {
    guard let peak = report.peak else { return [] }
    return [
      "**Peak queue depth:** \(RenderingSupport.plural(peak.depth, "object")) in queue"
        + " `\(Escaping.markdownCode(peak.queue))` at \(TimeFormatting.format(peak.at))"
        + " (session \(peak.session + 1))."
    ]
  }
}
