import DeallocLog
import TextEscaping

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
  /// Every frame of a stack as recorded, instead of the program's first and the rest
  /// folded into one line (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init() {}

  public func render(_ result: GateResult) -> String {
    let lines = RenderingSupport.separated([
      Self.verdict(result),
      Self.processLeaks(result, allFrames: allFrames),
      counted(result),
      Self.suppressed(result),
      Self.known(result),
      Self.fixed(result),
      Self.unusedSuppressions(result),
      Self.warnings(result),
    ])
    return lines.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }

  /// The overall result, what was read, then each threshold's count against its limit.
  private static func verdict(_ result: GateResult) -> [String] {
    typealias S = RenderingSupport
    let summary = result.report.summary
    var failed = result.failedThresholds.map { "--\($0.threshold.optionName)" }
    if result.processLeaks?.passed == false { failed.append("--" + ProcessLeakResult.optionName) }
    if result.growingTypes?.passed == false { failed.append("--" + GrowingTypesResult.optionName) }
    if result.libraryLeaks?.passed == false { failed.append("--" + LibraryLeakResult.optionName) }
    let verdict =
      result.passed
      ? "passed"
      : "FAILED (\(S.plural(failed.count, "threshold")) exceeded: "
        + failed.joined(separator: ", ") + ")"
    var out = [
      "dealloctrace check: \(verdict)",
      "  read \(S.plural(summary.sessions, "session")), \(S.plural(summary.enqueued, "object"))"
        + " enqueued, \(S.plural(summary.checks, "leak check"))"
        + (result.report.hasIncompleteSession ? " (a session is incomplete)" : ""),
      "  " + S.findingsSentence(result.report) + "; the counts below are objects and checks",
      "",
    ]
    for threshold in result.thresholds {
      out.append(
        "  \(S.pad(threshold.passed ? "ok" : "FAIL", 5)) \(S.pad("--" + threshold.threshold.optionName, 21))"
          + threshold.sentence)
    }
    if let process = result.processLeaks {
      out.append(
        "  \(S.pad(process.passed ? "ok" : "FAIL", 5)) \(S.pad("--" + ProcessLeakResult.optionName, 21))"
          + process.sentence)
    }
    if let growing = result.growingTypes {
      out.append(
        "  \(S.pad(growing.passed ? "ok" : "FAIL", 5)) \(S.pad("--" + GrowingTypesResult.optionName, 21))"
          + growing.sentence)
    }
    if let library = result.libraryLeaks {
      out.append(
        "  \(S.pad(library.passed ? "ok" : "FAIL", 5)) \(S.pad("--" + LibraryLeakResult.optionName, 21))"
          + library.sentence)
    }
    return out
  }

  /// The census's program leaks as `leaks` prints them, when they failed the gate.
  private static func processLeaks(_ result: GateResult, allFrames: Bool) -> [String] {
    guard let process = result.processLeaks, !process.passed,
      let final = result.report.census.final
    else {
      return []
    }
    // Only what counts: a suppressed or known census leak is not what failed.
    return ["Leaks in the whole process (census \"\(final.label)\")"]
      + process.counted.prefix(5).flatMap { judged in
        (judged.baseline == .new ? ["    new: not in the baseline"] : [])
          + CensusLeaksText.group(judged.group, allFrames: allFrames)
      }
  }

  /// The top findings that count, numbered; empty when none does.
  private func counted(_ result: GateResult) -> [String] {
    let counted = result.counted
    guard !counted.isEmpty else { return [] }
    let shown = counted.prefix(maximumFindings)
    var out = [
      counted.count > shown.count
        ? "Top findings (\(shown.count) of \(counted.count))" : "Findings (\(counted.count))"
    ]
    for (number, judged) in shown.enumerated() {
      out.append("")
      out.append(contentsOf: countedEntry(judged, number: number + 1))
    }
    if counted.count > shown.count {
      out.append("")
      out.append(
        "… \(RenderingSupport.plural(counted.count - shown.count, "more finding")) not shown;"
          + " `dealloctrace report` lists them all")
    }
    return out
  }

  /// One counted finding: its headline with the baseline's judgement, its explanation, first
  /// example, holder path and caller frames.
  private func countedEntry(_ judged: GateResult.JudgedFinding, number: Int) -> [String] {
    typealias S = RenderingSupport
    let finding = judged.finding
    let note = Self.baselineNote(judged) + (judged.failing ? "" : " [within its limit]")
    var out = [
      "\(number). \(finding.kind.title.uppercased()): \(finding.signature.title)"
        + " (×\(finding.count))\(note)",
      "   id:\(finding.id)",
      "   \(finding.explanation)",
    ]
    if let example = finding.examples.first {
      out.append("   first: \(S.example(example, of: finding))")
    }
    for line in S.holderLines(finding, allFrames: allFrames) { out.append("   " + line) }
    let stack = StackListing(finding.stack, limit: maximumFrames, allFrames: allFrames)
    if !stack.frames.isEmpty || stack.folded > 0 {
      out.append("   enqueued at:")
      for frame in stack.frames { out.append("     \(S.frameLine(frame))") }
      for line in stack.trailingLines { out.append("     " + line) }
    }
    return out
  }

  /// The suppressed findings with the suppression and its reason; empty when none is.
  private static func suppressed(_ result: GateResult) -> [String] {
    let suppressed = result.suppressed
    guard !suppressed.isEmpty else { return [] }
    let objects = suppressed.reduce(0) { $0 + $1.finding.count }
    let findings = RenderingSupport.plural(result.suppressedFindingCount, "finding")
    var out = ["Suppressed (\(findings), \(objects) not counted)"]
    for judged in suppressed {
      let finding = judged.finding
      let suppression = judged.suppressedBy!
      let reason = suppression.reason.isEmpty ? "no reason given" : suppression.reason
      out.append(
        "  - \(finding.kind.title): \(finding.signature.title) (×\(finding.count))"
          + " id:\(finding.id) by \(suppression.pattern) (\(suppression.location)): \(reason)")
    }
    return out
  }

  /// The findings the baseline already knows; empty without a baseline or when none is known.
  private static func known(_ result: GateResult) -> [String] {
    let known = result.known
    guard let baseline = result.baseline, !known.isEmpty else { return [] }
    let objects = known.reduce(0) { $0 + $1.finding.count }
    var out = [
      "Known (\(RenderingSupport.plural(known.count, "finding")) in the baseline \(baseline.path),"
        + " \(objects) not counted)"
    ]
    for judged in known {
      let finding = judged.finding
      out.append(
        "  - \(finding.kind.title): \(finding.signature.title) (×\(finding.count)"
          + "\(Self.baselineCount(judged))) id:\(finding.id)")
    }
    return out
  }

  /// The baseline's entries no longer found, to be removed from it.
  private static func fixed(_ result: GateResult) -> [String] {
    let fixed = result.fixedBaselineEntries
    guard let baseline = result.baseline, !fixed.isEmpty else { return [] }
    var out = [
      "Fixed (\(fixed.count)): in the baseline but no longer found; remove them from"
        + " \(baseline.path) (or write it again with --write-baseline)"
    ]
    for entry in fixed {
      out.append(
        "  - id:\(entry.id) \(entry.kind.title): \(entry.title) (baseline ×\(entry.count))")
    }
    return out
  }

  /// The suppressions that matched nothing.
  private static func unusedSuppressions(_ result: GateResult) -> [String] {
    let unused = result.unusedSuppressions
    guard !unused.isEmpty else { return [] }
    var out = [
      "Unused suppressions (\(unused.count)): they matched nothing;"
        + " remove them or fix their pattern"
    ]
    for suppression in unused {
      let reason = suppression.reason.isEmpty ? "" : " (\(suppression.reason))"
      out.append("  - \(suppression.location) \(suppression.pattern)\(reason)")
    }
    return out
  }

  /// How many warnings the input raised, pointing at the report that lists them.
  private static func warnings(_ result: GateResult) -> [String] {
    let warnings = result.report.warnings.count + result.report.omittedWarnings
    guard warnings > 0 else { return [] }
    return [
      "\(RenderingSupport.plural(warnings, "warning")) about the input;"
        + " `dealloctrace report` lists them"
    ]
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
