import DeallocLog

/// The verdict of `dealloctrace check` as plain text: what a CI log shows first.
///
/// Short on purpose: the overall result, each threshold's count against its limit, the top
/// findings that count (with their explanation, first example and caller frames), then the
/// suppressed findings with their reasons and the suppressions that matched nothing. The
/// full story is `dealloctrace report`'s job.
public struct GateTextRenderer: Sendable {
  /// Counted findings shown in full; the rest are counted.
  public var maximumFindings = 5
  /// Caller frames shown per finding.
  public var maximumFrames = 4

  public init() {}

  public func render(_ result: GateResult) -> String {
    typealias S = RenderingSupport
    var out: [String] = []
    let summary = result.report.summary
    let failed = result.failedThresholds
    let verdict =
      result.passed
      ? "passed"
      : "FAILED (\(S.plural(failed.count, "threshold")) exceeded: "
        + failed.map { "--\($0.threshold.optionName)" }.joined(separator: ", ") + ")"
    out.append("dealloctrace check: \(verdict)")
    out.append(
      "  read \(S.plural(summary.sessions, "session")), \(S.plural(summary.enqueued, "object"))"
        + " enqueued, \(S.plural(summary.checks, "leak check"))"
        + (result.report.hasIncompleteSession ? " (a session is incomplete)" : ""))
    out.append("")
    for threshold in result.thresholds {
      out.append(
        "  \(S.pad(threshold.passed ? "ok" : "FAIL", 5)) \(S.pad("--" + threshold.threshold.optionName, 21))"
          + threshold.sentence)
    }

    let counted = result.counted
    if !counted.isEmpty {
      out.append("")
      let shown = counted.prefix(maximumFindings)
      out.append(
        counted.count > shown.count
          ? "Top findings (\(shown.count) of \(counted.count))" : "Findings (\(counted.count))")
      for (number, judged) in shown.enumerated() {
        let finding = judged.finding
        let note = Self.baselineNote(judged) + (judged.failing ? "" : " [within its limit]")
        out.append("")
        out.append(
          "\(number + 1). \(finding.kind.title.uppercased()): \(finding.signature.title)"
            + " (×\(finding.count))\(note)")
        out.append("   id:\(finding.id)")
        out.append("   \(finding.explanation)")
        if let example = finding.examples.first {
          out.append("   first: \(S.example(example))")
        }
        for line in S.holderLines(finding) { out.append("   " + line) }
        let (frames, omitted) = S.callerFrames(finding.stack, limit: maximumFrames)
        if !frames.isEmpty {
          out.append("   enqueued at:")
          for frame in frames { out.append("     \(S.frameLine(frame))") }
          if omitted > 0 { out.append("     … \(omitted) more frames") }
        }
      }
      if counted.count > shown.count {
        out.append("")
        out.append(
          "… \(S.plural(counted.count - shown.count, "more finding")) not shown;"
            + " `dealloctrace report` lists them all")
      }
    }

    let suppressed = result.suppressed
    if !suppressed.isEmpty {
      let objects = suppressed.reduce(0) { $0 + $1.finding.count }
      out.append("")
      out.append(
        "Suppressed (\(S.plural(result.suppressedFindingCount, "finding")), \(objects) not counted)"
      )
      for judged in suppressed {
        let finding = judged.finding
        let suppression = judged.suppressedBy!
        let reason = suppression.reason.isEmpty ? "no reason given" : suppression.reason
        out.append(
          "  - \(finding.kind.title): \(finding.signature.title) (×\(finding.count))"
            + " id:\(finding.id) by \(suppression.pattern) (\(suppression.location)): \(reason)")
      }
    }

    let known = result.known
    if let baseline = result.baseline, !known.isEmpty {
      let objects = known.reduce(0) { $0 + $1.finding.count }
      out.append("")
      out.append(
        "Known (\(S.plural(known.count, "finding")) in the baseline \(baseline.path),"
          + " \(objects) not counted)")
      for judged in known {
        let finding = judged.finding
        out.append(
          "  - \(finding.kind.title): \(finding.signature.title) (×\(finding.count)"
            + "\(Self.baselineCount(judged))) id:\(finding.id)")
      }
    }

    if let baseline = result.baseline, !result.fixedBaselineEntries.isEmpty {
      let fixed = result.fixedBaselineEntries
      out.append("")
      out.append(
        "Fixed (\(fixed.count)): in the baseline but no longer found; remove them from"
          + " \(baseline.path) (or write it again with --write-baseline)")
      for entry in fixed {
        out.append(
          "  - id:\(entry.id) \(entry.kind.title): \(entry.title) (baseline ×\(entry.count))")
      }
    }

    if !result.unusedSuppressions.isEmpty {
      out.append("")
      out.append(
        "Unused suppressions (\(result.unusedSuppressions.count)): they matched nothing;"
          + " remove them or fix their pattern")
      for suppression in result.unusedSuppressions {
        let reason = suppression.reason.isEmpty ? "" : " (\(suppression.reason))"
        out.append("  - \(suppression.location) \(suppression.pattern)\(reason)")
      }
    }

    let warnings = result.report.warnings.count + result.report.omittedWarnings
    if warnings > 0 {
      out.append("")
      out.append(
        "\(S.plural(warnings, "warning")) about the input; `dealloctrace report` lists them")
    }
    return out.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }

  /// How the baseline judged a counted finding, for its headline: ` [new]`, ` [grown from
  /// ×2 in the baseline]`, or nothing without a baseline.
  static func baselineNote(_ judged: GateResult.JudgedFinding) -> String {
    switch judged.baseline {
    case .new: return " [new]"
    case .grown(let baselineCount): return " [grown from ×\(baselineCount) in the baseline]"
    case .known, nil: return ""
    }
  }

  /// `, baseline ×N` for a known finding whose count went down, else nothing.
  static func baselineCount(_ judged: GateResult.JudgedFinding) -> String {
    guard case .known(let baselineCount) = judged.baseline, baselineCount != judged.finding.count
    else { return "" }
    return ", baseline ×\(baselineCount)"
  }
}
