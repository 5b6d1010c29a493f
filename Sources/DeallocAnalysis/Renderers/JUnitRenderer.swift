/// The gate's verdict as JUnit XML, the format every CI server shows as a test report.
///
/// One suite, `dealloctrace`, holds one test case per threshold (class
/// `dealloctrace.thresholds`) and one per finding signature (class `dealloctrace.<kind>`):
/// - a finding that counts against an exceeded threshold is a `<failure>` whose text is the
///   explanation, its first examples and its enqueue stack;
/// - a finding within its limit passes, its explanation in `<system-out>`;
/// - a suppressed finding is `<skipped>`, with the suppression and its reason.
///
/// A finding's case carries `file` and `line` (read by GitLab, Jenkins and the common
/// GitHub reporters) when a frame of its stack has them, which takes `--symbolize`.
///
/// Everything from the log is escaped, and characters XML 1.0 forbids (control characters
/// but tab, newline and return; U+FFFE, U+FFFF) are written as `\u{…}` text, since XML 1.0
/// has no way to represent them; the trade-off is that such a type name reads differently
/// in the report than in the log. `time` is the one value not derived from the result,
/// so the CLI passes the analysis time and tests pass 0.
public struct JUnitRenderer: Sendable {
  /// The suite's `time` attribute, in seconds.
  public var time: Double
  /// Frames written per failure.
  public var maximumFrames = 16

  public init(time: Double = 0) {
    self.time = time
  }

  public func render(_ result: GateResult) -> String {
    var cases: [String] = []
    var failures = 0
    var skipped = 0
    for threshold in result.thresholds {
      if !threshold.passed { failures += 1 }
      cases.append(thresholdCase(threshold))
    }
    var names: [String: Int] = [:]
    for judged in result.findings {
      let classname = "dealloctrace." + judged.finding.kind.rawValue
      var name = judged.finding.signature.title
      let seen = names[classname + "\u{1}" + name, default: 0] + 1
      names[classname + "\u{1}" + name] = seen
      if seen > 1 { name += " [\(seen)]" }
      if judged.isSuppressed {
        skipped += 1
      } else if judged.failing {
        failures += 1
      }
      cases.append(findingCase(judged, classname: classname, name: name))
    }
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
    if !result.unusedSuppressions.isEmpty {
      let lines = result.unusedSuppressions.map { s in
        "unused suppression \(s.location): \(s.pattern)" + (s.reason.isEmpty ? "" : ": \(s.reason)")
      }
      out += "    <system-out>\(Self.text(lines.joined(separator: "\n")))</system-out>\n"
    }
    out += "  </testsuite>\n"
    out += "</testsuites>\n"
    return out
  }

  private func property(_ name: String, _ value: String) -> String {
    "      <property name=\"\(Self.attribute(name))\" value=\"\(Self.attribute(value))\"/>\n"
  }

  private func thresholdCase(_ threshold: GateResult.ThresholdResult) -> String {
    let name = "--" + threshold.threshold.optionName
    var out =
      "    <testcase classname=\"dealloctrace.thresholds\" name=\"\(Self.attribute(name))\""
      + " time=\"0\">\n"
    if threshold.passed {
      out += "      <system-out>\(Self.text(threshold.sentence))</system-out>\n"
    } else {
      out +=
        "      <failure message=\"\(Self.attribute(threshold.sentence))\" type=\"threshold\">"
        + Self.text(
          "\(threshold.sentence).\nThe findings of this kind that count are the failing test"
            + " cases of class dealloctrace.\(threshold.threshold.kind.rawValue).")
        + "</failure>\n"
    }
    return out + "    </testcase>\n"
  }

  private func findingCase(
    _ judged: GateResult.JudgedFinding, classname: String, name: String
  ) -> String {
    let finding = judged.finding
    var out =
      "    <testcase classname=\"\(Self.attribute(classname))\" name=\"\(Self.attribute(name))\""
    if let frame = finding.sourceFrame, let file = frame.file {
      out += " file=\"\(Self.attribute(file))\""
      if let line = frame.line { out += " line=\"\(line)\"" }
    }
    out += " time=\"0\">\n"
    let headline = "\(finding.kind.title): \(finding.signature.title) (×\(finding.count))"
    if let suppression = judged.suppressedBy {
      let reason = suppression.reason.isEmpty ? "no reason given" : suppression.reason
      out +=
        "      <skipped message=\"\(Self.attribute("suppressed by \(suppression.pattern) (\(suppression.location)): \(reason)"))\"/>\n"
    } else if judged.failing {
      out +=
        "      <failure message=\"\(Self.attribute(headline))\" type=\"\(finding.kind.rawValue)\">"
        + Self.text(details(finding)) + "</failure>\n"
    } else {
      out +=
        "      <system-out>\(Self.text("within its limit: " + headline + "\n" + details(finding)))"
        + "</system-out>\n"
    }
    return out + "    </testcase>\n"
  }

  /// The explanation, the examples and the enqueue stack.
  private func details(_ finding: Finding) -> String {
    var lines = [finding.explanation, ""]
    for example in finding.examples { lines.append("- " + RenderingSupport.example(example)) }
    if finding.count > finding.examples.count {
      lines.append("- … and \(finding.count - finding.examples.count) more")
    }
    let (frames, omitted) = RenderingSupport.callerFrames(finding.stack, limit: maximumFrames)
    if !frames.isEmpty {
      lines.append("")
      lines.append("enqueued at:")
      for frame in frames { lines.append("  " + RenderingSupport.frameLine(frame)) }
      if omitted > 0 { lines.append("  … \(omitted) more frames") }
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

  /// Escapes character data.
  static func text(_ value: String) -> String {
    escape(value, inAttribute: false)
  }

  /// Escapes an attribute value written between double quotes. Line breaks and tabs become
  /// character references, which attribute-value normalization would otherwise turn into
  /// spaces.
  static func attribute(_ value: String) -> String {
    escape(value, inAttribute: true)
  }

  private static func escape(_ value: String, inAttribute: Bool) -> String {
    var out = ""
    out.reserveCapacity(value.utf8.count)
    for scalar in value.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"" where inAttribute: out += "&quot;"
      case "\n" where inAttribute: out += "&#10;"
      case "\r": out += "&#13;"
      case "\t" where inAttribute: out += "&#9;"
      case "\n", "\t": out.unicodeScalars.append(scalar)
      default:
        if isAllowedInXML(scalar) {
          out.unicodeScalars.append(scalar)
        } else {
          out += "\\u{" + String(scalar.value, radix: 16) + "}"
        }
      }
    }
    return out
  }

  /// XML 1.0's `Char` production: tab, newline, return, U+0020–U+D7FF, U+E000–U+FFFD and
  /// U+10000 and above (Swift strings hold no surrogates).
  private static func isAllowedInXML(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x9, 0xA, 0xD: return true
    case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...: return true
    default: return false
    }
  }
}
