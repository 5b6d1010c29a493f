import DeallocLog

/// Which census groups are libraries' leaks (issue 36), decided from the types in the record
/// on top of the recorder's `library` flag: with `--library GLOB`, a group whose every named
/// type comes from a module the globs match (or from the toolchain's) is a library leak too.
///
/// Why from the type names: the record names each type `Module.Type` (generic arguments and
/// a closure context's captures included), which is all a log reader has; the trade-off is
/// that a test case class XCTest made is known as the library's only by the recorder, which
/// reads its superclass.
public enum CensusLibraries {
  /// The modules the recorder counts as the toolchain's (`Sources/CHolders/census.c`).
  public static let toolchainModules: Set<String> = [
    "Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization", "Dispatch",
    "XCTest", "Testing", "_Concurrency", "CoreFoundation", "_StringProcessing",
    "Synchronization", "_Testing_Foundation",
  ]

  /// The modules named in `type`: the first component of each qualified name in it
  /// (`Swift.Array<App.Order>` names Swift and App; `closure context (Shop.Cart, ?)` names
  /// Shop; `(other types)` names none).
  public static func modules(in type: String) -> [String] {
    var modules: [String] = []
    let scalars = Array(type.unicodeScalars)
    var index = 0
    var previous: Unicode.Scalar? = nil
    while index < scalars.count {
      let scalar = scalars[index]
      guard isIdentifier(scalar) else {
        previous = scalar
        index += 1
        continue
      }
      var end = index
      while end < scalars.count, isIdentifier(scalars[end]) { end += 1 }
      let startsAName = previous.map { "<(,[: ".unicodeScalars.contains($0) } ?? true
      if startsAName, end < scalars.count, scalars[end] == "." {
        var name = String.UnicodeScalarView()
        name.append(contentsOf: scalars[index..<end])
        let module = String(name)
        if !modules.contains(module) { modules.append(module) }
      }
      previous = scalars[end - 1]
      index = end
    }
    return modules
  }

  private static func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
  }

  /// The modules of a group's members, in member order: which library leaked it.
  public static func modules(of group: CensusGroup) -> [String] {
    var result: [String] = []
    for member in group.members {
      for module in modules(in: member.type) where !result.contains(module) {
        result.append(module)
      }
    }
    return result
  }

  /// Whether `globs` (`--library`) make `group` a library leak: it names at least one
  /// module, every module it names is the toolchain's or one `globs` match, and no member was
  /// summed as `(other types)`. Always false without globs.
  public static func isLibrary(_ group: CensusGroup, modules globs: [Glob]) -> Bool {
    guard !globs.isEmpty, group.members.allSatisfy({ $0.type != "(other types)" }) else {
      return false
    }
    let named = modules(of: group)
    return !named.isEmpty
      && named.allSatisfy { module in
        toolchainModules.contains(module) || globs.contains { $0.matches(module) }
      }
  }

  /// Marks as library leaks the program groups of `census` whose every named type's module
  /// is the toolchain's or one `globs` match, and moves their objects and bytes from the
  /// program's sums to the libraries'. Nothing changes without globs.
  static func mark(_ census: inout CensusRecord, modules globs: [Glob]) {
    guard !globs.isEmpty else { return }
    for index in census.groups.indices where !census.groups[index].library {
      let group = census.groups[index]
      guard isLibrary(group, modules: globs) else { continue }
      census.groups[index].library = true
      census.leaked -= group.count
      census.leakedBytes -= group.bytes
      census.libraryLeaked += group.count
      census.libraryLeakedBytes += group.bytes
    }
    // The program's findings first, then the libraries', as the recorder orders them.
    census.groups = census.groups.filter { !$0.library } + census.groups.filter(\.library)
  }

  /// One library's leaks: its groups, objects and bytes.
  public struct ModuleLeaks: Sendable, Equatable {
    /// The module, or the modules joined by `+` when a group mixes several.
    public var module: String
    public var groups: Int
    public var objects: Int
    public var bytes: Int
  }

  /// `groups` summed by the library they come from (``library(of:)``), most groups first.
  public static func byModule(_ groups: [CensusGroup]) -> [ModuleLeaks] {
    var order: [String] = []
    var sums: [String: ModuleLeaks] = [:]
    for group in groups {
      let module = library(of: group)
      if sums[module] == nil {
        order.append(module)
        sums[module] = ModuleLeaks(module: module, groups: 0, objects: 0, bytes: 0)
      }
      sums[module]!.groups += group.instances
      sums[module]!.objects += group.count
      sums[module]!.bytes += group.bytes
    }
    return order.map { sums[$0]! }.sorted { ($0.groups, $1.module) > ($1.groups, $0.module) }
  }

  /// Which library a library group is: its modules other than the standard library's
  /// (`Swift`), joined by `+`, so that XCTest's test-case cycles read "XCTest"; a group of
  /// only the standard library's types is "Swift"; a group named by no module (a test case
  /// class the recorder knew as XCTest's, only closure contexts) is "XCTest" when a member
  /// names XCTest, else "(unnamed)".
  public static func library(of group: CensusGroup) -> String {
    let named = modules(of: group)
    let libraries = named.filter { $0 != "Swift" }
    if !libraries.isEmpty {
      // Program modules in a library group are test cases XCTest made: XCTest's leak.
      let toolchain = libraries.filter { toolchainModules.contains($0) }
      return (toolchain.isEmpty ? libraries : toolchain).joined(separator: "+")
    }
    return named.isEmpty ? "(unnamed)" : "Swift"
  }
}
