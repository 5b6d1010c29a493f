/// What changed between two runs (a pull request's HEAD against its BASE): findings that
/// are new, gone or changed in count, matched by ``FindingID``, and false leaks that
/// appeared or disappeared.
///
/// Why only new findings fail (``hasNewFindings``): a count that changes with an unchanged
/// id is the same bug seen more or less often (a test added, a loop longer), which the
/// baseline gate judges; a new id is code that leaks where it did not, which a pull request
/// should not bring in.
public struct FindingsDiff: Sendable, Equatable {
  /// A finding in both runs with a different count.
  public struct CountChange: Sendable, Equatable {
    public var base: FindingDigest
    public var head: FindingDigest
  }

  /// A kind of false leak whose count went from `base` to `head` (0 on one side).
  public struct FalseLeakChange: Sendable, Equatable {
    public var key: DiffSide.FalseLeakKey
    public var base: Int
    public var head: Int
  }

  public var base: DiffSide
  public var head: DiffSide
  /// In HEAD only, in baseline order (most serious kind first).
  public var new: [FindingDigest]
  /// In BASE only.
  public var gone: [FindingDigest]
  /// In both, with another count.
  public var changed: [CountChange]
  /// In both, with the same count.
  public var unchanged: [FindingDigest]
  /// False leaks of checks and types that HEAD has and BASE had not.
  public var falseLeaksAppeared: [FalseLeakChange]
  /// False leaks that BASE had and HEAD has not.
  public var falseLeaksDisappeared: [FalseLeakChange]

  /// Whether HEAD has a finding BASE had not: `diff` exits 1.
  public var hasNewFindings: Bool { !new.isEmpty }

  public init(base: DiffSide, head: DiffSide) {
    self.base = base
    self.head = head
    let baseByID = Dictionary(
      base.findings.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    let headIDs = Set(head.findings.map(\.id))
    new = []
    changed = []
    unchanged = []
    for finding in head.findings {
      guard let before = baseByID[finding.id] else {
        new.append(finding)
        continue
      }
      if before.count == finding.count {
        unchanged.append(finding)
      } else {
        changed.append(CountChange(base: before, head: finding))
      }
    }
    gone = base.findings.filter { !headIDs.contains($0.id) }
    falseLeaksAppeared = head.falseLeaks.keys.filter { base.falseLeaks[$0] == nil }.sorted().map {
      FalseLeakChange(key: $0, base: 0, head: head.falseLeaks[$0]!)
    }
    falseLeaksDisappeared = base.falseLeaks.keys.filter { head.falseLeaks[$0] == nil }.sorted()
      .map { FalseLeakChange(key: $0, base: base.falseLeaks[$0]!, head: 0) }
  }
}
