/// The text report's findings, most serious first: each with its id, explanation, examples,
/// holder path and caller frames. Says so plainly when there are none.
enum TextFindingsSection {
  static func lines(_ report: Report, maximum: Int, allFrames: Bool) -> [String] {
    guard !report.findings.isEmpty else {
      return ["No findings: nothing leaked, stuck or left in a queue."]
    }
    var out = ["Findings (\(report.findings.count), most serious first)"]
    for (number, finding) in report.findings.prefix(maximum).enumerated() {
      out.append("")
      out.append(contentsOf: entry(finding, number: number + 1, allFrames: allFrames))
    }
    if report.findings.count > maximum {
      out.append("")
      out.append("… \(report.findings.count - maximum) more findings not shown")
    }
    return out
  }

  /// One numbered finding.
  private static func entry(_ finding: Finding, number: Int, allFrames: Bool) -> [String] {
    typealias S = RenderingSupport
    var out = [
      "\(number). \(finding.kind.title.uppercased()): \(finding.signature.title)"
        + " (×\(finding.count))",
      "   id:\(finding.id)",
      "   \(finding.explanation)",
    ]
    for example in finding.examples {
      out.append("   - \(S.example(example, of: finding))")
    }
    if finding.count > finding.examples.count {
      out.append("   - … and \(finding.count - finding.examples.count) more")
    }
    for line in S.holderLines(finding, allFrames: allFrames) { out.append("   " + line) }
    let stack = StackListing(finding.stack, limit: S.framesShown, allFrames: allFrames)
    if !stack.frames.isEmpty || stack.folded > 0 {
      out.append("   enqueued at:")
      for frame in stack.frames { out.append("     \(S.frameLine(frame))") }
      for line in stack.trailingLines { out.append("     " + line) }
    }
    return out
  }
}
