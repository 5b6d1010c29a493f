/// What a gate decided, with everything its renderers need: the report it judged, each
/// threshold's count against its limit, and each finding with the suppression that covered
/// it, if any.
public struct GateResult: Sendable, Equatable {
  /// One threshold, judged.
  public struct ThresholdResult: Sendable, Equatable {
    public var threshold: GateThresholds.Threshold
    /// `nil` when unlimited.
    public var limit: Int?
    /// What counts against the limit: the objects (checks, for true leaks) of the findings
    /// of its kind that no suppression covered.
    public var count: Int
    /// The objects of its kind that suppressions covered (not counted).
    public var suppressed: Int
    /// The objects of its kind that the baseline covered (not counted).
    public var known = 0

    /// How far over the limit the count is; 0 when within it.
    public var exceededBy: Int {
      guard let limit else { return 0 }
      return max(0, count - limit)
    }

    public var passed: Bool { exceededBy == 0 }

    /// One line: "3 leaked objects, 2 over --max-leaked 1" or "0 stuck objects (max 0)".
    public var sentence: String {
      let counted = threshold.counted(count)
      let suppressedNote =
        (suppressed > 0 ? ", \(suppressed) more suppressed" : "")
        + (known > 0 ? ", \(known) more in the baseline" : "")
      guard let limit else { return "\(counted) (no limit\(suppressedNote))" }
      if passed { return "\(counted) (max \(limit)\(suppressedNote))" }
      return "\(counted), \(exceededBy) over --\(threshold.optionName) \(limit)\(suppressedNote)"
    }
  }

  /// One finding of the report, or one part of it, as the gate saw it.
  ///
  /// A finding is split when suppressions cover only some of its members, or when
  /// different suppressions cover different members: the members that count form one
  /// part, and the members each suppression covers form one part per suppression, each
  /// with its own count and examples.
  public struct JudgedFinding: Sendable, Equatable {
    /// The finding, or the part of it judged here (its `count` is the part's).
    public var finding: Finding
    /// The suppression that covers this part (the first in file order that matches its
    /// members); `nil` when it counts.
    public var suppressedBy: Suppression?
    /// Whether it counts against a threshold that failed (the findings to fix first).
    public var failing: Bool
    /// The position in the report's ``Report/findings`` of the finding this is (part of),
    /// which ties the parts of one finding together.
    public var reportIndex: Int
    /// How the baseline judged it; `nil` when no baseline was given, and for suppressed
    /// parts (suppressions are applied first).
    public var baseline: BaselineStatus? = nil

    public var isSuppressed: Bool { suppressedBy != nil }

    /// Whether the baseline covers every member: set apart, like a suppressed finding.
    public var isKnown: Bool {
      if case .known = baseline { return true }
      return false
    }

    /// The members that count against its threshold: none when suppressed or known, the
    /// growth past the baseline's count when it grew, else all of them.
    public var countedMembers: Int {
      if isSuppressed { return 0 }
      switch baseline {
      case .known: return 0
      case .grown(let baselineCount): return finding.count - baselineCount
      case .new, nil: return finding.count
      }
    }
  }

  /// What a baseline says about a finding the gate counts.
  ///
  /// Closed: a finding is absent from the baseline, or in it with as many members or fewer.
  public enum BaselineStatus: Sendable, Equatable {
    /// Its id is not in the baseline.
    case new
    /// In the baseline, with a count at least as large: not counted.
    case known(baselineCount: Int)
    /// In the baseline, but with more members now: the growth counts.
    case grown(baselineCount: Int)
  }

  /// The report that was judged.
  public var report: Report
  /// Every threshold, in ``GateThresholds/Threshold/allCases`` order.
  public var thresholds: [ThresholdResult]
  /// Every finding of the report, in the report's order (most serious first), split into
  /// parts where suppressions cover some of its members: the part that counts first, then
  /// one part per suppression in file order.
  public var findings: [JudgedFinding]
  /// Suppressions that covered no finding at all, in file order.
  public var unusedSuppressions: [Suppression]
  /// The baseline the findings were judged against, if any.
  public var baseline: Baseline? = nil
  /// The baseline's entries that no finding matched any more: fixed, to be removed from
  /// the baseline so that it shrinks.
  public var fixedBaselineEntries: [FindingDigest] = []

  /// Whether every threshold held.
  public var passed: Bool {
    thresholds.allSatisfy(\.passed) && (processLeaks?.passed ?? true)
      && (growingTypes?.passed ?? true) && (libraryLeaks?.passed ?? true)
  }

  /// The judgement of the libraries' leaks; nil unless `--max-library-leaks` was given and
  /// the log held a census.
  public var libraryLeaks: LibraryLeakResult? = nil

  /// The judgement of growth across checkpoints; nil when no label has enough censuses.
  public var growingTypes: GrowingTypesResult? = nil

  /// The whole-process census's judgement; nil when the log held no census.
  public var processLeaks: ProcessLeakResult? = nil

  /// The thresholds that were exceeded.
  public var failedThresholds: [ThresholdResult] { thresholds.filter { !$0.passed } }

  /// The findings that count, most serious first: failing ones, then the tolerated.
  public var counted: [JudgedFinding] {
    findings.filter { !$0.isSuppressed && !$0.isKnown && $0.failing }
      + findings.filter { !$0.isSuppressed && !$0.isKnown && !$0.failing }
  }

  /// The findings the baseline covers entirely, in the report's order.
  public var known: [JudgedFinding] { findings.filter(\.isKnown) }

  /// The findings (or parts) that suppressions covered, one per suppression and finding.
  public var suppressed: [JudgedFinding] { findings.filter(\.isSuppressed) }

  /// How many of the report's findings suppressions covered, in whole or in part.
  public var suppressedFindingCount: Int {
    Set(findings.filter(\.isSuppressed).map(\.reportIndex)).count
  }

  /// The result of one threshold.
  public func result(_ threshold: GateThresholds.Threshold) -> ThresholdResult {
    thresholds.first { $0.threshold == threshold }!
  }
}
