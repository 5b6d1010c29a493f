/// The text report's findings, most serious first: each with its id, explanation, examples,
/// holder path and caller frames. Says so plainly when there are none.
enum TextFindingsSection {
  static func lines(_ report: Report, maximum: Int) -> [String] {
    guard !report.findings.isEmpty else {
      return ["No findings: nothing leaked, stuck or left in a queue."]
    }
    var out = ["Findings (\(report.findings.count), most serious first)"]
    for (number, finding) in report.findings.prefix(maximum).enumerated() {
      out.append("")
      out.append(contentsOf: entry(finding, number: number + 1))
    }
    if report.findings.count > maximum {
      out.append("")
      out.append("… \(report.findings.count - maximum) more findings not shown")
    }
    return out
  }

  /// One numbered finding.
  private static func entry(_ finding: Finding, number: Int) -> [String] {
    typealias S = RenderingSupport
    var out = [
      "\(number). \(finding.kind.title.uppercased()): \(finding.signature.title)"
        + " (×\(finding.count))",
      "   id:\(finding.id)",
      "   \(finding.explanation)",
    ]
    for example in finding.examples {
      out.append("   - \(S.example(example))")
    }
    if finding.count > finding.examples.count {
      out.append("   - … and \(finding.count - finding.examples.count) more")
    }
    for line in S.holderLines(finding) { out.append("   " + line) }
    let (frames, omitted) = S.callerFrames(finding.stack)
    if !frames.isEmpty {
      out.append("   enqueued at:")
      for frame in frames { out.append("     \(S.frameLine(frame))") }
      if omitted > 0 { out.append("     … \(omitted) more frames") }
    }
    return out
  }
}
