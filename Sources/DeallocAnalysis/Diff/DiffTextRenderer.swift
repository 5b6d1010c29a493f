import DeallocLog
import TextEscaping

/// `dealloctrace diff` as plain text, for a CI log: the counts first, then each list.
public struct DiffTextRenderer: Sendable {
  /// Signature frames shown under a new finding.
  public var maximumFrames = 3

  public init() {}

  public func render(_ diff: FindingsDiff) -> String {
    var out: [String] = []
    out.append("dealloctrace diff: " + DiffSummary.sentence(diff))
    out.append("  base: " + DiffSummary.describe(diff.base))
    out.append("  head: " + DiffSummary.describe(diff.head))
    if !diff.new.isEmpty {
      out.append("")
      out.append("New in head (\(diff.new.count))")
      for finding in diff.new {
        out.append("  - \(Self.line(finding)) (×\(finding.count))")
        for frame in finding.frames.prefix(maximumFrames) { out.append("      \(frame)") }
      }
    }
    if !diff.gone.isEmpty {
      out.append("")
      out.append("Gone from head (\(diff.gone.count))")
      for finding in diff.gone {
        out.append("  - \(Self.line(finding)) (×\(finding.count) in base)")
      }
    }
    if !diff.changed.isEmpty {
      out.append("")
      out.append("Changed in count (\(diff.changed.count))")
      for change in diff.changed {
        out.append("  - \(Self.line(change.head)): ×\(change.base.count) → ×\(change.head.count)")
      }
    }
    for (title, changes) in [
      ("False leaks that appeared", diff.falseLeaksAppeared),
      ("False leaks that disappeared", diff.falseLeaksDisappeared),
    ] where !changes.isEmpty {
      out.append("")
      out.append("\(title) (\(changes.count)): delayed deallocs, not leaks")
      for change in changes {
        out.append("  - \(DiffSummary.falseLeak(change)) (×\(max(change.base, change.head)))")
      }
    }
    return out.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }

  /// `id:… kind: title`.
  static func line(_ finding: FindingDigest) -> String {
    "id:\(finding.id) \(finding.kind.title): \(finding.title)"
  }
}
