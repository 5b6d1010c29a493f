/// `check`'s judgement of growth across checkpoints (`--max-growing-types`): the program's
/// types whose live count rose at every census of one label (``CensusSection/growing``).
/// Types of the toolchain's libraries (``CensusLibraries/toolchainModules``), of the modules
/// `--library` names, and closure contexts, whose module the census cannot name, are listed
/// in the report but not counted: the recorder's own buffers grow between checkpoints that
/// come faster than its writer, and a library's growth is not the program's to fix.
public struct GrowingTypesResult: Sendable, Equatable {
  public var limit: Int?
  /// The program's growing types.
  public var types: [GrowingType]

  public static let optionName = "max-growing-types"

  /// The judgement of `report`; nil when no label has enough censuses to compare.
  public init?(_ report: Report, limit: Int?) {
    let growing = report.census.growing
    let labels = Dictionary(grouping: report.census.censuses, by: \.label)
    guard labels.values.contains(where: { $0.count >= CensusSection.minimumCheckpoints })
    else { return nil }
    self.limit = limit
    let libraries = report.options.libraryModules
    types = growing.filter { Self.isProgramType($0.type, libraries: libraries) }
  }

  public var passed: Bool { limit.map { types.count <= $0 } ?? true }

  /// "1 growing type (max 0): CensusProbe.CacheEntry".
  public var sentence: String {
    var text = "\(types.count) growing \(types.count == 1 ? "type" : "types")"
    text += limit.map { " (max \($0))" } ?? " (no limit)"
    if !types.isEmpty { text += ": " + types.prefix(5).map(\.type).joined(separator: ", ") }
    return text
  }

  /// Whether `type` names a module of the program: not the toolchain's, not one of
  /// `libraries` (`--library`), not a closure context.
  static func isProgramType(_ type: String, libraries: [Glob] = []) -> Bool {
    guard let dot = type.firstIndex(of: "."), !type.hasPrefix("closure context"),
      !type.hasPrefix("box (")
    else { return false }
    let module = String(type[..<dot])
    return !CensusLibraries.toolchainModules.contains(module)
      && !libraries.contains { $0.matches(module) }
  }
}
