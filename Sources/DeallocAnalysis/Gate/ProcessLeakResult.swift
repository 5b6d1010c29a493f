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

  public static let optionName = "max-process-leaks"

  public init(limit: Int?, count: Int, library: Int, error: String?) {
    self.limit = limit
    self.count = count
    self.library = library
    self.error = error
  }

  /// The judgement of `report`'s final census; nil when the log held none.
  public init?(_ report: Report, limit: Int?) {
    guard let final = report.census.final else { return nil }
    self.init(
      limit: limit, count: report.census.programLeakGroups,
      library: final.libraryGroups.reduce(0) { $0 + $1.instances }, error: final.error)
  }

  public var passed: Bool { limit.map { count <= $0 } ?? true }

  /// "2 process leaks (max 0); 1 library leak not counted".
  public var sentence: String {
    var text = "\(count) process \(count == 1 ? "leak" : "leaks")"
    text += limit.map { " (max \($0))" } ?? " (no limit)"
    if library > 0 { text += "; \(library) library \(library == 1 ? "leak" : "leaks") not counted" }
    if let error { text += "; the census could not run: \(error)" }
    return text
  }
}
