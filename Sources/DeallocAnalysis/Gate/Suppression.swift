import DeallocLog

/// One line of a suppressions file: a finding whose type, one of whose enqueue frames, or
/// whose id matches is left out of the gate's counts, and shown apart with the reason.
public struct Suppression: Sendable, Hashable {
  /// What the glob is matched against.
  ///
  /// Not closed: the suppressions file may learn other targets. A `switch` over it outside
  /// this package should have a `default:`.
  public enum Target: String, Sendable, Hashable, Codable {
    /// The finding's fully qualified type name.
    case type
    /// The symbols of the finding's enqueue stack (a frame without a symbol is matched by
    /// its display name, `module+0xoffset`); any one matching frame is enough.
    case frame
    /// The finding's ``FindingID``, exactly (the glob holds the id's hex digits, which no
    /// glob character is among): the way to set aside one finding without a pattern that
    /// could match others, and the same name a baseline uses.
    case id
  }

  public var target: Target
  public var glob: Glob
  /// The text after the pattern (without a leading `#`), empty when none was written.
  public var reason: String
  /// The suppressions file and the 1-based line it was written on.
  public var file: String
  public var line: Int

  public init(target: Target, glob: Glob, reason: String = "", file: String, line: Int) {
    self.target = target
    self.glob = glob
    self.reason = reason
    self.file = file
    self.line = line
  }

  /// The suppression as it would be written: `type:Feed.ImageCache*`, quoted (with `\"`
  /// for a quote) when the glob holds a space, a tab, a `#` or a quote, so that it reads
  /// back as the same suppression.
  public var pattern: String {
    let text = glob.pattern
    let needsQuotes = text.contains { $0 == " " || $0 == "\t" || $0 == "#" || $0 == "\"" }
    guard needsQuotes else { return "\(target.rawValue):" + text }
    return "\(target.rawValue):\"" + text.replacing("\"", with: "\\\"") + "\""
  }

  /// `file:line`, for messages and annotations.
  public var location: String { "\(file):\(line)" }

  /// Whether the suppression covers `finding`: its type, or (for `frame:`) a frame of the
  /// finding's first enqueue stack. The gate judges `frame:` suppressions member by member
  /// (``matches(type:stack:)`` on each distinct stack), so that a finding whose members
  /// were enqueued through different deeper frames can be suppressed in part.
  public func matches(_ finding: Finding) -> Bool {
    matches(
      type: finding.signature.type, stack: finding.stack, id: finding.id,
      ruleOneID: finding.ruleOneID, ruleTwoID: finding.ruleTwoID)
  }

  /// Whether the suppression covers an object of `type` enqueued through `stack`, member of
  /// the finding `id` (`nil` when unknown, which an `id:` suppression never matches).
  /// `ruleOneID` and `ruleTwoID`: the finding's ids by rules 1 and 2 (``Finding/ruleOneID``,
  /// ``Finding/ruleTwoID``), which an `id:` suppression written before rule 2 or 3 names.
  public func matches(
    type: String, stack: [Frame], id: FindingID? = nil, ruleOneID: FindingID? = nil,
    ruleTwoID: FindingID? = nil
  ) -> Bool {
    switch target {
    case .type:
      return glob.matches(type)
    case .frame:
      return stack.contains { glob.matches($0.symbol ?? $0.displayName) }
    case .id:
      return [id, ruleOneID, ruleTwoID].contains { $0.map { glob.matches($0.hex) } ?? false }
    }
  }
}
