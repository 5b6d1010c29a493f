import DeallocLog

/// `check --max-library-leaks N`: the libraries' leak groups in the log's final census
/// against a limit, for those who want the toolchain's leaks judged too (a toolchain
/// upgrade that leaks more). Not judged by default: library leaks are not the program's.
public struct LibraryLeakResult: Sendable, Equatable {
  public var limit: Int
  /// The libraries' leak groups (every instance of each finding).
  public var count: Int
  /// The same groups by module, most groups first: which library leaked and how much.
  public var modules: [CensusLibraries.ModuleLeaks]

  public static let optionName = "max-library-leaks"

  /// The judgement of `report`'s final census; nil without a limit or a census.
  public init?(_ report: Report, limit: Int?) {
    guard let limit, let final = report.census.final else { return nil }
    self.limit = limit
    count =
      final.libraryGroups.reduce(0) { $0 + $1.instances }
      + (final.unlistedAreLibrary ? final.moreFindings : 0)
    modules = CensusLibraries.byModule(final.libraryGroups)
  }

  public var passed: Bool { count <= limit }

  /// "3 library leaks (max 0): XCTest ×3".
  public var sentence: String {
    var text = "\(count) library \(count == 1 ? "leak" : "leaks") (max \(limit))"
    if !modules.isEmpty {
      text += ": " + modules.map { "\($0.module) ×\($0.groups)" }.joined(separator: ", ")
    }
    return text
  }
}
