import DeallocAnalysis
import DeallocLog
import Foundation

/// Properties every gate verdict and every gate output must have, whatever the log and the
/// suppressions: the fuzz target (`Fuzz/`) checks them on random inputs, and the gate's
/// tests replay the fuzz regressions through them.
///
/// Why a target of its own beside the tests, as `package`: the fuzz target (built from these
/// sources) and the tests must check the same things, and neither is public API, so it stays
/// out of the library that ships. The checks are cheap (scans of the rendered text, no XML
/// parser), so the fuzzer keeps its speed.
package enum GateInvariants {
  /// The suppressions written in `text`: every line that is not a JSON record (does not
  /// start with `{`) is read as a suppression line on its own, so that one fuzz input
  /// carries both a log and the suppressions to judge it with. A line that does not parse
  /// is skipped; its error must still be one line. At most `limit` lines of at most
  /// `maximumLength` characters are read, which bounds the glob matching per input.
  package static func suppressions(
    in text: String, limit: Int = 16, maximumLength: Int = 512
  ) -> (list: SuppressionList, violations: [String]) {
    var suppressions: [Suppression] = []
    var violations: [String] = []
    var read = 0
    for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
      guard read < limit else { break }
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      guard trimmed.first != "{", line.count <= maximumLength else { continue }
      read += 1
      do {
        suppressions += try SuppressionList.parse(String(line), file: "fuzz.supp").suppressions
      } catch {
        if error.description.contains("\n") {
          violations.append("a suppression error is not one line: \(error.description)")
        }
      }
    }
    return (SuppressionList(suppressions), violations)
  }

  /// Glob properties on `patterns`: compiling never traps, and a pattern with every
  /// character escaped matches exactly that text.
  package static func globViolations(_ patterns: [String]) -> [String] {
    var violations: [String] = []
    for pattern in patterns {
      if let glob = try? Glob(pattern) {
        for text in patterns where glob.matches(text) != glob.referenceMatches(text) {
          violations.append(
            "\(pattern.debugDescription) on \(text.debugDescription) disagrees with the reference")
        }
      }
      let literal = pattern.map { "\\" + String($0) }.joined()
      // A backslash before a combining mark joins it into one character: no longer an
      // escape, so the property does not apply.
      guard literal.count == 2 * pattern.count else { continue }
      guard let glob = try? Glob(literal) else {
        violations.append("the escaped pattern of \(pattern.debugDescription) does not compile")
        continue
      }
      if !glob.matches(pattern) {
        violations.append("the escaped pattern of \(pattern.debugDescription) misses it")
      }
      if !pattern.isEmpty, glob.matches(pattern + "x") {
        violations.append("the escaped pattern of \(pattern.debugDescription) matches more")
      }
    }
    return violations
  }

  /// What is wrong with `result` and with what the gate renderers make of it; empty when
  /// every invariant holds.
  package static func violations(_ result: GateResult) -> [String] {
    var violations: [String] = []
    let report = result.report
    // The counts add up: every object of a threshold's kind is counted, suppressed or known.
    for threshold in result.thresholds {
      let expected: Int
      switch threshold.threshold {
      case .leaked: expected = report.summary.leaked
      case .stuck: expected = report.summary.stuck
      case .trueLeaks: expected = report.summary.trueLeaks - report.summary.trueLeaksOfLeaked
      case .neverReleased: expected = report.summary.neverReleased
      }
      if threshold.count + threshold.suppressed + threshold.known != expected {
        violations.append(
          "--\(threshold.threshold.optionName): \(threshold.count) counted +"
            + " \(threshold.suppressed) suppressed + \(threshold.known) known, but the summary"
            + " has \(expected)")
      }
    }
    // The parts of a finding are together, in report order, and add up to it.
    var sums = Array(repeating: 0, count: report.findings.count)
    var previous = -1
    var ordered = true
    for judged in result.findings {
      guard judged.reportIndex >= previous, judged.reportIndex < sums.count else {
        violations.append("a part's reportIndex \(judged.reportIndex) is out of order")
        ordered = false
        break
      }
      previous = judged.reportIndex
      sums[judged.reportIndex] += judged.finding.count
    }
    if ordered {
      for (finding, sum) in zip(report.findings, sums) where finding.count != sum {
        violations.append("the parts of \(finding.signature.key) hold \(sum) of \(finding.count)")
      }
    }
    violations += textViolations(GateTextRenderer().render(result), "text verdict")
    violations += textViolations(GateMarkdownRenderer().render(result), "Markdown verdict")
    violations += jsonViolations(GateJSONRenderer().render(result))
    violations += junitViolations(JUnitRenderer().render(result), result)
    violations += githubViolations(
      GitHubRenderer(workspace: "/", currentDirectory: "/").render(result))
    if result.baseline == nil {
      violations += baselineViolations(result)
    }
    return violations
  }

  /// A baseline reads back as it was written, whatever the names in it, and a run judged
  /// against its own baseline passes with nothing fixed; the outputs of that judgement
  /// (known findings, notices) hold every invariant too.
  private static func baselineViolations(_ result: GateResult) -> [String] {
    var violations: [String] = []
    let recorded = Baseline(recording: result, path: "fuzz-baseline.json")
    if (try? Baseline.parse(recorded.serialized(), path: "fuzz-baseline.json")) != recorded {
      violations.append("a baseline does not read back as it was written")
    }
    var thresholds = GateThresholds()
    for threshold in result.thresholds { thresholds[threshold.threshold] = threshold.limit }
    let unsuppressed = Gate(thresholds: thresholds).evaluate(result.report)
    let own = Baseline(recording: unsuppressed, path: "fuzz-baseline.json")
    let judged = Gate(thresholds: thresholds, baseline: own).evaluate(result.report)
    if !judged.passed || !judged.counted.isEmpty || !judged.fixedBaselineEntries.isEmpty {
      violations.append("a run judged against its own baseline does not pass")
    }
    return violations + Self.violations(judged)
  }

  /// A text output keeps log text on its lines and sends no control characters.
  private static func textViolations(_ text: String, _ name: String) -> [String] {
    let bad = text.unicodeScalars.first {
      ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
    }
    return bad.map { ["the \(name) holds control character U+\(hex($0.value))"] } ?? []
  }

  private static func jsonViolations(_ json: String) -> [String] {
    guard (try? JSONSerialization.jsonObject(with: Data(json.utf8))) is [String: Any] else {
      return ["the JSON verdict is not a JSON object"]
    }
    return []
  }

  /// Only characters XML 1.0 allows, and counts that agree with the cases (log text is
  /// escaped, so every `<testcase`, `<failure` and `<skipped` is one of ours).
  private static func junitViolations(_ xml: String, _ result: GateResult) -> [String] {
    var violations: [String] = []
    if let bad = xml.unicodeScalars.first(where: { !isXMLCharacter($0.value) }) {
      violations.append("the JUnit file holds U+\(hex(bad.value)), which XML 1.0 forbids")
    }
    let cases = xml.components(separatedBy: "<testcase ").count - 1
    let failures = xml.components(separatedBy: "<failure ").count - 1
    let skipped = xml.components(separatedBy: "<skipped ").count - 1
    // The census's verdict is a case too, and each of its program findings.
    let census = result.processLeaks.map { 1 + $0.groups.count } ?? 0
    if cases != result.thresholds.count + result.report.findings.count + census {
      violations.append("the JUnit file has \(cases) cases, not one per threshold and finding")
    }
    let counts = "tests=\"\(cases)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\""
    if xml.components(separatedBy: counts).count != 3 {
      violations.append("the JUnit counts disagree with its cases (\(counts))")
    }
    return violations
  }

  /// Every line is one workflow command, at most 10 of each kind.
  private static func githubViolations(_ output: String) -> [String] {
    var violations: [String] = []
    var perLevel: [String: Int] = [:]
    for line in output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
      let level = ["error", "warning", "notice"].first { line.hasPrefix("::\($0) ") }
      guard let level else {
        violations.append("an annotation line is not a workflow command: \(line.debugDescription)")
        continue
      }
      perLevel[level, default: 0] += 1
      // A tab is kept on purpose (the renderer writes it as it is; it cannot end a command).
      if line.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" }) {
        violations.append("an annotation holds a control character: \(line.debugDescription)")
      }
    }
    if !output.isEmpty && !output.hasSuffix("\n") {
      violations.append("the annotations do not end with a line break")
    }
    for (level, count) in perLevel where count > 10 {
      violations.append("\(count) \(level) annotations")
    }
    return violations
  }

  private static func isXMLCharacter(_ value: UInt32) -> Bool {
    value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
      || (0xE000...0xFFFD).contains(value) || value >= 0x10000
  }

  private static func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }
}
