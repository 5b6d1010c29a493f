import DeallocLog
import TextEscaping

/// The gate's verdict as JUnit XML, the format every CI server shows as a test report.
///
/// One suite, `dealloctrace`, holds one test case per threshold (class
/// `dealloctrace.thresholds`) and one per finding signature (class `dealloctrace.<kind>`):
/// - a finding that counts against an exceeded threshold is a `<failure>` whose text is the
///   explanation, its first examples, who holds it (when holders were recorded) and its
///   enqueue stack;
/// - a finding within its limit passes, its explanation in `<system-out>`;
/// - a finding that suppressions cover entirely is `<skipped>`, with each suppression that
///   covered part of it, its reason and how many members it covered.
/// A finding that suppressions cover only in part stays one test case, judged by the
/// members that count; the suppressed members are listed after its stack.
///
/// With a baseline, a known finding is `<skipped>` ("in the baseline"), a new or grown one
/// counts as without a baseline (a `<failure>` when its threshold is exceeded, which the
/// default thresholds of 0 make of any new leak), and the baseline's fixed entries are
/// listed in the suite's `<system-out>`, as unused suppressions are.
///
/// A finding's case carries `file` and `line` (read by GitLab, Jenkins and the common
/// GitHub reporters) when a caller frame has them, which takes `--symbolize`.
///
/// Everything from the log is escaped, and characters XML 1.0 forbids (control characters
/// but tab, newline and return; U+FFFE, U+FFFF) are replaced by `\u{…}` text, since XML 1.0
/// has no way to represent them, not even as character references; the trade-off is that
/// such a type name reads differently in the report than in the log. `time` is the one
/// value not derived from the result, so the CLI passes the analysis time and tests pass 0.
public struct JUnitRenderer: Sendable {
  /// The suite's `time` attribute, in seconds.
  public var time: Double
  /// Frames written per failure.
  public var maximumFrames = 16
  /// Names source files relative to the checkout (`file` attributes, stacks); `nil` keeps
  /// them as the symbolizer found them.
  public var workspace: WorkspacePaths?
  /// Every frame of a stack as recorded, instead of the program's first and the rest
  /// folded into one line (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init(time: Double = 0) {
    self.time = time
  }

  public func render(_ result: GateResult) -> String {
    let (cases, failures, skipped) = testCases(result)
    let counts =
      "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\""
      + " time=\"\(Self.seconds(time))\""
    var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    out += "<testsuites name=\"dealloctrace\" \(counts)>\n"
    out += "  <testsuite name=\"dealloctrace\" \(counts)>\n"
    out += "    <properties>\n"
    out += property("tool", "dealloctrace \(DeallocAnalysis.toolVersion)")
    out += property("passed", result.passed ? "true" : "false")
    for input in result.report.inputs { out += property("input", input) }
    out += property("stuck-after", TimeFormatting.format(result.report.options.stuckAfter))
    out += "    </properties>\n"
    out += cases.joined()
    out += suiteOutput(result)
    out += "  </testsuite>\n"
    out += "</testsuites>\n"
    return out
  }

  /// One test case per threshold, per finding and per census group, with the suite's counts
  /// of failures and of skipped cases (findings the baseline knows or suppressions cover).
  private func testCases(_ result: GateResult) -> (cases: [String], failures: Int, skipped: Int) {
    var cases: [String] = []
    var failures = 0
    var skipped = 0
    for threshold in result.thresholds {
      if !threshold.passed { failures += 1 }
      cases.append(thresholdCase(threshold))
    }
    var names: [String: Int] = [:]
    for parts in Self.partsByFinding(result.findings) {
      let finding = result.report.findings[parts[0].reportIndex]
      let classname = "dealloctrace." + finding.kind.rawValue
      var name = "\(finding.signature.title) [id:\(finding.id)]"
      let seen = names[classname + "\u{1}" + name, default: 0] + 1
      names[classname + "\u{1}" + name] = seen
      if seen > 1 { name += " [\(seen)]" }
      let counted = parts.first { !$0.isSuppressed }
      if counted == nil || counted!.isKnown {
        skipped += 1
      } else if counted!.failing {
        failures += 1
      }
      cases.append(
        findingCase(
          finding, counted: counted, suppressed: parts.filter(\.isSuppressed),
          classname: classname, name: name, baseline: result.baseline))
    }
    if let process = result.processLeaks {
      if !process.passed { failures += 1 }
      cases.append(processCase(process))
      for judged in process.groups {
        if judged.countedInstances == 0 {
          skipped += 1
        } else if !process.passed {
          failures += 1
        }
        cases.append(censusCase(judged, failing: !process.passed, baseline: result.baseline))
      }
    }
    return (cases, failures, skipped)
  }

  /// The suite's `system-out`: suppressions that matched nothing and baseline entries that
  /// are fixed; empty when there are none.
  private func suiteOutput(_ result: GateResult) -> String {
    let fixed = result.fixedBaselineEntries.map { entry in
      "fixed, remove from the baseline \(result.baseline?.path ?? ""): id:\(entry.id)"
        + " \(entry.kind.title): \(entry.title) (baseline ×\(entry.count))"
    }
    guard !result.unusedSuppressions.isEmpty || !fixed.isEmpty else { return "" }
    let lines =
      result.unusedSuppressions.map { s in
        "unused suppression \(s.location): \(s.pattern)"
          + (s.reason.isEmpty ? "" : ": \(s.reason)")
      } + fixed
    return "    <system-out>\(Escaping.xmlText(lines.joined(separator: "\n")))</system-out>\n"
  }

  private func property(_ name: String, _ value: String) -> String {
    "      <property name=\"\(Escaping.xmlAttribute(name))\" value=\"\(Escaping.xmlAttribute(value))\"/>\n"
  }

  private func thresholdCase(_ threshold: GateResult.ThresholdResult) -> String {
    let name = "--" + threshold.threshold.optionName
    var out =
      "    <testcase classname=\"dealloctrace.thresholds\" name=\"\(Escaping.xmlAttribute(name))\""
      + " time=\"0\">\n"
    if threshold.passed {
      out += "      <system-out>\(Escaping.xmlText(threshold.sentence))</system-out>\n"
    } else {
      out +=
        "      <failure message=\"\(Escaping.xmlAttribute(threshold.sentence))\" type=\"threshold\">"
        + Escaping.xmlText(
          "\(threshold.sentence).\nThe findings of this kind that count are the failing test"
            + " cases of class dealloctrace.\(threshold.threshold.kind.rawValue).")
        + "</failure>\n"
    }
    return out + "    </testcase>\n"
  }

  /// The `--max-process-leaks` case: the census's verdict.
  private func processCase(_ process: ProcessLeakResult) -> String {
    var out =
      "    <testcase classname=\"dealloctrace.thresholds\" name=\"--\(ProcessLeakResult.optionName)\""
      + " time=\"0\">\n"
    if process.passed {
      out += "      <system-out>\(Escaping.xmlText(process.sentence))</system-out>\n"
    } else {
      out +=
        "      <failure message=\"\(Escaping.xmlAttribute(process.sentence))\" type=\"threshold\">"
        + Escaping.xmlText(
          "\(process.sentence).\nThe census findings that count are the failing test cases of"
            + " class dealloctrace.processLeak.")
        + "</failure>\n"
    }
    return out + "    </testcase>\n"
  }

  /// The case of one census finding of the program (class `dealloctrace.processLeak`): its
  /// `leaks`-style tree as the failure's text; skipped when suppressed or in the baseline.
  private func censusCase(
    _ judged: ProcessLeakResult.JudgedGroup, failing: Bool, baseline: Baseline?
  ) -> String {
    let group = judged.group
    let name = "\(group.rootType) [id:\(group.id)]"
    var out =
      "    <testcase classname=\"dealloctrace.processLeak\" name=\"\(Escaping.xmlAttribute(name))\""
      + " time=\"0\">\n"
    if let suppression = judged.suppressedBy {
      let reason = suppression.reason.isEmpty ? "no reason given" : suppression.reason
      let message = "suppressed by \(suppression.pattern) (\(suppression.location)): \(reason)"
      out += "      <skipped message=\"\(Escaping.xmlAttribute(message))\"/>\n"
      return out + "    </testcase>\n"
    }
    if judged.isKnown {
      let message = "known: in the baseline \(baseline?.path ?? "") (×\(group.instances))"
      out += "      <skipped message=\"\(Escaping.xmlAttribute(message))\"/>\n"
      return out + "    </testcase>\n"
    }
    let kind = FindingDigest.Kind.process(group.kind)
    let headline =
      "\(kind.title): \(group.rootType) (×\(group.instances), \(group.count) objects,"
      + " \(group.bytes) bytes)"
    var text = CensusTreeText.lines(group, listing: StackListing.lines(allFrames: allFrames))
      .joined(separator: "\n")
    switch judged.baseline {
    case .new: text = "new: not in the baseline \(baseline?.path ?? "")\n\n" + text
    case .grown(let count):
      text = "grown from ×\(count) in the baseline \(baseline?.path ?? "")\n\n" + text
    case .known, nil: break
    }
    if failing {
      out +=
        "      <failure message=\"\(Escaping.xmlAttribute(headline))\" type=\"\(kind.rawValue)\">"
        + Escaping.xmlText(text) + "</failure>\n"
    } else {
      out +=
        "      <system-out>\(Escaping.xmlText("within its limit: " + headline + "\n" + text))"
        + "</system-out>\n"
    }
    return out + "    </testcase>\n"
  }

  /// The case of one finding: `counted` is the part that counts (`nil` when suppressions
  /// cover every member), `suppressed` the parts each suppression covered.
  private func findingCase(
    _ finding: Finding, counted: GateResult.JudgedFinding?,
    suppressed: [GateResult.JudgedFinding], classname: String, name: String, baseline: Baseline?
  ) -> String {
    var out =
      "    <testcase classname=\"\(Escaping.xmlAttribute(classname))\" name=\"\(Escaping.xmlAttribute(name))\""
    if let frame = finding.callerSourceFrame(), let file = frame.file {
      out += " file=\"\(Escaping.xmlAttribute(workspace?.display(file) ?? file))\""
      if let line = frame.line { out += " line=\"\(line)\"" }
    }
    out += " time=\"0\">\n"
    func covered(_ judged: GateResult.JudgedFinding) -> String {
      let s = judged.suppressedBy!
      let reason = s.reason.isEmpty ? "no reason given" : s.reason
      return "suppressed by \(s.pattern) (\(s.location)): \(reason)"
    }
    guard let counted, !counted.isKnown else {
      // Entirely suppressed; with several suppressions, each says how many it covered.
      var lines = suppressed.map {
        covered($0) + (suppressed.count > 1 || counted != nil ? " (×\($0.finding.count))" : "")
      }
      if let counted {
        lines.insert(
          "known: in the baseline \(baseline?.path ?? "") (×\(counted.finding.count))", at: 0)
      }
      out +=
        "      <skipped message=\"\(Escaping.xmlAttribute(lines.joined(separator: "\n")))\"/>\n"
      return out + "    </testcase>\n"
    }
    let part = counted.finding
    let headline = "\(part.kind.title): \(part.signature.title) (×\(part.count))"
    var text = details(part)
    switch counted.baseline {
    case .new: text = "new: not in the baseline \(baseline?.path ?? "")\n\n" + text
    case .grown(let count):
      text = "grown from ×\(count) in the baseline \(baseline?.path ?? "")\n\n" + text
    case .known, nil: break
    }
    if !suppressed.isEmpty {
      let objects = suppressed.reduce(0) { $0 + $1.finding.count }
      text += "\n\n\(objects) more not counted:"
      for judged in suppressed { text += "\n- ×\(judged.finding.count) " + covered(judged) }
    }
    if counted.failing {
      out +=
        "      <failure message=\"\(Escaping.xmlAttribute(headline))\" type=\"\(part.kind.rawValue)\">"
        + Escaping.xmlText(text) + "</failure>\n"
    } else {
      out +=
        "      <system-out>\(Escaping.xmlText("within its limit: " + headline + "\n" + text))"
        + "</system-out>\n"
    }
    return out + "    </testcase>\n"
  }

  /// The judged findings grouped by the report finding they are parts of, in order (the
  /// gate keeps the parts of one finding together).
  static func partsByFinding(
    _ findings: [GateResult.JudgedFinding]
  ) -> [[GateResult.JudgedFinding]] {
    var groups: [[GateResult.JudgedFinding]] = []
    for judged in findings {
      if let last = groups.last?.first, last.reportIndex == judged.reportIndex {
        groups[groups.count - 1].append(judged)
      } else {
        groups.append([judged])
      }
    }
    return groups
  }

  /// The explanation, the examples, the holder path and the enqueue stack.
  private func details(_ finding: Finding) -> String {
    var lines = [finding.explanation, ""]
    for example in finding.examples {
      lines.append("- " + RenderingSupport.example(example, of: finding))
    }
    if finding.count > finding.examples.count {
      lines.append("- … and \(finding.count - finding.examples.count) more")
    }
    let holders = RenderingSupport.holderLines(finding, allFrames: allFrames)
    if !holders.isEmpty {
      lines.append("")
      lines += holders
    }
    let stack = StackListing(finding.stack, limit: maximumFrames, allFrames: allFrames)
    if !stack.frames.isEmpty || stack.folded > 0 {
      lines.append("")
      lines.append("enqueued at:")
      for frame in stack.frames {
        lines.append("  " + RenderingSupport.frameLine(workspace?.display(frame) ?? frame))
      }
      for line in stack.trailingLines { lines.append("  " + line) }
    } else {
      lines.append("")
      lines.append("enqueue stack: not recorded")
    }
    return lines.joined(separator: "\n")
  }

  /// Seconds with up to three decimals, with a dot whatever the locale.
  static func seconds(_ value: Double) -> String {
    let millis = Int64((max(0, value.isFinite ? value : 0) * 1000).rounded())
    let fraction = millis % 1000
    let padded = String(repeating: "0", count: 3 - String(fraction).count) + String(fraction)
    return "\(millis / 1000).\(padded)"
  }
}
