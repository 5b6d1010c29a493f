import DeallocLog

/// `check`'s judgement of the whole-process leak census (`--max-process-leaks`): the
/// program's leak groups in the log's final census against the limit. Library leaks (the
/// toolchain's own, issue 36) are shown but never counted.
///
/// Why groups, not objects: one cycle of a thousand objects is one bug to fix, and the same
/// shape leaked a hundred times is one finding ×100; groups count each leak once per
/// occurrence, which is what a limit of leaks means.
public struct ProcessLeakResult: Sendable, Equatable {
  /// The limit; nil for unlimited.
  public var limit: Int?
  /// The program's leak groups (every instance of each finding).
  public var count: Int
  /// Library leak groups, not counted.
  public var library: Int
  /// Why the final census could not run, if it could not.
  public var error: String?
  /// Leak groups a suppression set aside (`id:HASH` for the finding's id, `type:GLOB` for
  /// its root's type), with the suppression.
  public var suppressed: [(id: String, by: Suppression)] = []

  public static func == (left: Self, right: Self) -> Bool {
    left.limit == right.limit && left.count == right.count && left.library == right.library
      && left.error == right.error && left.suppressed.map(\.id) == right.suppressed.map(\.id)
  }

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
    for group in final.programGroups {
      let rootType = group.tree.first?.type ?? group.members.first?.type ?? ""
      var claimed: Suppression?
      for (index, suppression) in suppressions.suppressions.enumerated()
      where Self.covers(suppression, group, rootType: rootType) {
        used[index] = true
        if claimed == nil { claimed = suppression }
      }
      guard let claimed else { continue }
      count -= group.instances
      suppressed.append((group.id, claimed))
    }
  }

  /// Whether `suppression` sets `group` aside: `id:` its finding id, `type:` its root's
  /// type. A `frame:` suppression never does (a census has no enqueue stack).
  private static func covers(_ suppression: Suppression, _ group: CensusGroup, rootType: String)
    -> Bool
  {
    switch suppression.target {
    case .id: return suppression.glob.matches(group.id)
    case .type: return suppression.glob.matches(rootType)
    case .frame: return false
    }
  }

  public var passed: Bool { limit.map { count <= $0 } ?? true }

  /// "2 process leaks (max 0); 1 library leak not counted".
  public var sentence: String {
    var text = "\(count) process \(count == 1 ? "leak" : "leaks")"
    text += limit.map { " (max \($0))" } ?? " (no limit)"
    if !suppressed.isEmpty { text += ", \(suppressed.count) suppressed" }
    if library > 0 { text += "; \(library) library \(library == 1 ? "leak" : "leaks") not counted" }
    if let error { text += "; the census could not run: \(error)" }
    return text
  }
}
