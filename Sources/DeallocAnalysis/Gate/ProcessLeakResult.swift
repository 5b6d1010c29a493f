import DeallocLog

/// `check`'s judgement of the whole-process leak census (`--max-process-leaks`): the
/// program's leak groups in the log's final census against the limit, after suppressions
/// and the baseline. Library leaks (the toolchain's own, issue 36) are shown but never
/// counted.
///
/// Why groups, not objects: one cycle of a thousand objects is one bug to fix, and the same
/// shape leaked a hundred times is one finding ×100; groups count each leak once per
/// occurrence, which is what a limit of leaks means.
public struct ProcessLeakResult: Sendable, Equatable {
  /// One census finding of the program, as the gate judged it.
  public struct JudgedGroup: Sendable, Equatable {
    public var group: CensusGroup
    /// The first suppression (in file order) that sets it aside (`id:HASH` for the
    /// finding's id, `type:GLOB` for its root's type); nil when it counts.
    public var suppressedBy: Suppression?
    /// How the baseline judged it; nil without a baseline, and when suppressed.
    public var baseline: GateResult.BaselineStatus?

    public var isSuppressed: Bool { suppressedBy != nil }

    public var isKnown: Bool {
      if case .known = baseline { return true }
      return false
    }

    /// The groups that count against the limit: none when suppressed or known, the growth
    /// past the baseline's count when it grew, else every instance.
    public var countedInstances: Int {
      if isSuppressed { return 0 }
      switch baseline {
      case .known: return 0
      case .grown(let baselineCount): return max(0, group.instances - baselineCount)
      case .new, nil: return group.instances
      }
    }
  }

  /// The limit; nil for unlimited.
  public var limit: Int?
  /// The program's leak groups that count (every instance of each finding, plus the
  /// findings the census summed without listing).
  public var count: Int
  /// Library leak groups, not counted.
  public var library: Int
  /// Why the final census could not run, if it could not.
  public var error: String?
  /// The program's findings of every session's last census (``CensusSection/programGroups``).
  public var groups: [JudgedGroup] = []
  /// Groups the baseline covered (not counted).
  public var known = 0

  public static let optionName = "max-process-leaks"

  public init(limit: Int?, count: Int, library: Int, error: String?) {
    self.limit = limit
    self.count = count
    self.library = library
    self.error = error
  }

  /// The judgement of `report`'s final census; nil when the log held none. Marks in `used`
  /// the suppressions that set a finding aside.
  public init?(
    _ report: Report, limit: Int?, suppressions: SuppressionList = SuppressionList(),
    used: inout [Bool]
  ) {
    guard let final = report.census.final else { return nil }
    self.init(
      limit: limit, count: report.census.programLeakGroups,
      library: final.libraryGroups.reduce(0) { $0 + $1.instances }, error: final.error)
    for group in report.census.programGroups {
      var claimed: Suppression?
      for (index, suppression) in suppressions.suppressions.enumerated()
      where Self.covers(suppression, group) {
        used[index] = true
        if claimed == nil { claimed = suppression }
      }
      if claimed != nil { count -= group.instances }
      groups.append(JudgedGroup(group: group, suppressedBy: claimed))
    }
  }

  /// Marks each unsuppressed group new, known or grown against `baseline` and takes what it
  /// covers off ``count``; returns the baseline's census entries no group matched (fixed).
  mutating func judge(against baseline: Baseline) -> [FindingDigest] {
    var allowance: [FindingID: Int] = [:]
    for entry in baseline.entries where entry.isProcess {
      allowance[entry.id, default: 0] += entry.count
    }
    var seen: Set<FindingID> = []
    for index in groups.indices where !groups[index].isSuppressed {
      let group = groups[index].group
      guard let id = FindingID(parsing: group.id), let allowed = allowance[id] else {
        groups[index].baseline = .new
        continue
      }
      seen.insert(id)
      if group.instances <= allowed {
        groups[index].baseline = .known(baselineCount: allowed)
        allowance[id] = allowed - group.instances
      } else {
        groups[index].baseline = .grown(baselineCount: allowed)
        allowance[id] = 0
      }
      let covered = group.instances - groups[index].countedInstances
      count -= covered
      known += covered
    }
    return baseline.entries.filter { $0.isProcess && !seen.contains($0.id) }
  }

  /// Whether `suppression` sets `group` aside: `id:` its finding id, `type:` its root's
  /// type. A `frame:` suppression never does (a census has no enqueue stack).
  private static func covers(_ suppression: Suppression, _ group: CensusGroup) -> Bool {
    switch suppression.target {
    case .id: return suppression.glob.matches(group.id)
    case .type: return suppression.glob.matches(group.rootType)
    case .frame: return false
    }
  }

  /// Findings a suppression set aside, with the suppression.
  public var suppressed: [(id: String, by: Suppression)] {
    groups.compactMap { judged in judged.suppressedBy.map { (judged.group.id, $0) } }
  }

  /// The findings that count, in the census's order.
  public var counted: [JudgedGroup] { groups.filter { $0.countedInstances > 0 } }

  public var passed: Bool { limit.map { count <= $0 } ?? true }

  /// "2 process leaks (max 0); 1 library leak not counted".
  public var sentence: String {
    var text = "\(count) process \(count == 1 ? "leak" : "leaks")"
    text += limit.map { " (max \($0))" } ?? " (no limit)"
    let suppressedCount = groups.filter(\.isSuppressed).count
    if suppressedCount > 0 { text += ", \(suppressedCount) suppressed" }
    if known > 0 { text += ", \(known) more in the baseline" }
    if library > 0 { text += "; \(library) library \(library == 1 ? "leak" : "leaks") not counted" }
    if let error { text += "; the census could not run: \(error)" }
    return text
  }
}

extension FindingDigest {
  /// Whether this is a census finding's entry.
  public var isProcess: Bool {
    if case .process = kind { return true }
    return false
  }
}
