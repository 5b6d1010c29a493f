import Foundation

/// What of a frame's or a type's name identifies a bug, for ``FindingID``: the names with
/// the parts that change when nothing about the bug did taken out, and the frames that are
/// test or compiler plumbing left out.
///
/// Why one place: a finding id, a baseline's old entries (mapped to the new rule when read)
/// and a saved report without ids all hash names; two copies of the rule would give one
/// leak two ids.
///
/// The trade-off: two closures of one function that leak the same type share an id (their
/// numbers go), and a bug enqueued only from plumbing is identified by its type and kind
/// alone. Both are rarer than an id that moves whenever a test is added.
public enum SymbolNormalization {
  /// `name` without what moves between builds, runs and unrelated edits:
  /// - closure numbers: `closure #4 in f()` and `implicit closure #2 in f()` lose ` #N`;
  /// - specialization and merge markers: `generic specialization <…> of `,
  ///   `function signature specialization <…> of `, `specialized `, `merged `,
  ///   `partial apply for `, `partial apply forwarder for ` (release builds' spelling);
  /// - an async function's resumption (`(2) suspend resume partial function for f()`) is
  ///   the function: its number counts suspension points, which inlining changes;
  /// - `(unknown context at $5611c35a93ac)`, an ASLR address: `(unknown context)`;
  /// - Swift Testing's macro names, tied to the source file and line: `__🟡$s…` becomes
  ///   `__🟡`, `__macro_local_12nameLLfMu_` becomes `__macro_local_`.
  public static func normalized(_ name: String) -> String {
    var text = Substring(name)
    var changed = true
    while changed {
      changed = false
      for prefix in droppedPrefixes where text.hasPrefix(prefix) {
        text = text.dropFirst(prefix.count)
        changed = true
      }
      if let resumed = resumedFunction(text) {
        text = resumed
        changed = true
      }
      for marker in specializationMarkers where text.hasPrefix(marker) {
        guard let of = text.range(of: "> of ") else { break }
        text = text[of.upperBound...]
        changed = true
      }
    }
    var result = String(text)
    result = removingNumbers(after: "closure #", in: result, keeping: "closure")
    result = replacingRuns(
      from: "(unknown context at $", through: ")", with: "(unknown context)", in: result)
    result = replacingTokens(after: "__🟡$", with: "__🟡", in: result)
    result = replacingTokens(after: "__macro_local_", with: "__macro_local_", in: result)
    return result
  }

  /// Whether a frame named `symbol` (demangled, or a module's file name when it has none) is
  /// plumbing rather than the program's: XCTest's and Swift Testing's frames, their
  /// generated test lists (`__allTests__`) and macro thunks (`$s…` left mangled, `__🟡$`,
  /// `…TestfMp_…`), libdispatch, the C library's start, the runtime (`swift_…`, `swift::…`),
  /// the standard library and Foundation (`Swift.…`, `Foundation.…`, specialized into the
  /// program or not: a specialization is named by its function) and the compiler's thunks.
  ///
  /// A closure belongs where the function that owns it does (`closure #1 in
  /// XCTest.XCTestCase.invokeTest()` is XCTest's).
  public static func isPlumbing(_ symbol: String) -> Bool {
    plumbingCategory(symbol) != nil
  }

  /// What the plumbing frame named `symbol` belongs to (XCTest, libdispatch, a compiler
  /// thunk…); `nil` for the program's frames. ``isPlumbing(_:)`` is this being non-nil, so
  /// that the frames an output folds are exactly those an id leaves out.
  public static func plumbingCategory(_ symbol: String) -> PlumbingCategory? {
    if let category = plumbingModules[symbol] { return category }
    if symbol.hasPrefix("$s") || symbol.hasPrefix("_$s") { return .swiftTesting }
    if let marker = plumbingMarkers.first(where: { symbol.contains($0.marker) }) {
      return marker.category
    }
    var owner = normalized(symbol)[...]
    if owner.hasPrefix("$s") { return .swiftTesting }
    while owner.hasPrefix("closure ") || owner.hasPrefix("implicit closure "),
      let separator = owner.range(of: " in ")
    {
      owner = owner[separator.upperBound...]
    }
    return plumbingPrefixes.first { owner.hasPrefix($0.prefix) }?.category
  }

  /// The names that go into an id, and that group findings, from a finding's signature
  /// frame names innermost first: the program's frames only, normalised, a frame that
  /// repeats the one before it (a `partial apply for` forwarder above its closure) once, and
  /// the test function left out when a program frame lies inside it
  /// (``isCalledByTestFramework(_:)``).
  ///
  /// Why the test function goes: a leak made in a helper is one bug whichever test called
  /// the helper, and whichever test framework ran that test (an XCTest method and a `@Test`
  /// function calling one helper gave two ids, two findings and two baseline entries). A
  /// leak made in the test itself keeps it: it is the only program frame. `leavingOutTheTest`
  /// false gives rule 2's frames, which kept it (``FindingID/ruleTwo(kind:type:symbols:)``).
  ///
  /// Not the rule that shows a stack (`EnqueueStacks.programFrames(of:)`,
  /// `RetainPairing.programFrames(_:)`, which drop the queue's and the tracer's frames):
  /// an id must stay the same across test frameworks and builds, so this one also drops
  /// their plumbing and normalises the names. A finding keeps its result (``ProgramFrames``).
  public static func programFrames(
    _ symbols: [String], leavingOutTheTest: Bool = true
  ) -> [String] {
    let both = programFrameNames(symbols)
    return leavingOutTheTest ? both.withoutTheTest : both.withTheTest
  }

  /// ``programFrames(_:leavingOutTheTest:)`` both ways from one pass, each frame judged and
  /// normalised once: what a finding keeps (``ProgramFrames``) for its grouping key and its
  /// ids by rules 3 and 2.
  static func programFrameNames(_ symbols: [String]) -> (
    withoutTheTest: [String], withTheTest: [String]
  ) {
    let categories = symbols.map(plumbingCategory)
    var withoutTheTest: [String] = []
    var withTheTest: [String] = []
    for (index, symbol) in symbols.enumerated() where categories[index] == nil {
      let name = normalized(symbol)
      if withTheTest.last != name { withTheTest.append(name) }
      if !withoutTheTest.isEmpty, isCalledByTestFramework(categories[(index + 1)...]) {
        continue
      }
      if withoutTheTest.last != name { withoutTheTest.append(name) }
    }
    return (withoutTheTest, withTheTest)
  }

  /// The index in `symbols` (innermost first) of the test function that made this stack:
  /// the first program frame called by a test framework (``isCalledByTestFramework(_:)``),
  /// or `nil` when the stack shows none (no test ran it, or it lies deeper).
  public static func testFunctionIndex(_ symbols: [String]) -> Int? {
    let categories = symbols.map(plumbingCategory)
    return symbols.indices.first {
      categories[$0] == nil && isCalledByTestFramework(categories[($0 + 1)...])
    }
  }

  /// Whether a program frame is a test function, from the categories of the signature
  /// frames outside it (innermost first): its caller, past compiler thunks, is XCTest or
  /// Swift Testing, or only thunks follow it to the end of the signature (XCTest calls a
  /// test through reabstraction thunks, and a release build's signature ends in them).
  ///
  /// The trade-off of the second case: a program function called through a thunk from a
  /// frame beyond the signature's depth is taken for a test, so two of them calling one
  /// helper share an id (the helper still names it). A test function deeper than the
  /// signature's last frame is not seen at all, and stays out of the id anyway.
  static func isCalledByTestFramework(_ outer: ArraySlice<PlumbingCategory?>) -> Bool {
    guard !outer.isEmpty else { return false }
    for category in outer {
      switch category {
      case .thunk?: continue
      case .xcTest?, .swiftTesting?: return true
      default: return false
      }
    }
    return true
  }

  private static let droppedPrefixes = [
    "merged ", "partial apply for ", "partial apply forwarder for ", "specialized ",
  ]
  private static let resumptionPrefixes = [
    "suspend resume partial function for ", "await resume partial function for ",
  ]

  /// The function an async resumption frame belongs to: `f()` of
  /// `(2) suspend resume partial function for f()`; `nil` for any other name.
  private static func resumedFunction(_ text: Substring) -> Substring? {
    var rest = text
    if rest.hasPrefix("(") {
      let digits = rest.dropFirst().prefix(while: \.isNumber)
      guard !digits.isEmpty, rest.dropFirst(1 + digits.count).hasPrefix(") ") else { return nil }
      rest = rest.dropFirst(digits.count + 3)
    }
    for prefix in resumptionPrefixes where rest.hasPrefix(prefix) {
      return rest.dropFirst(prefix.count)
    }
    return nil
  }
  private static let specializationMarkers = [
    "generic specialization <", "function signature specialization <",
  ]
  private static let plumbingModules: [String: PlumbingCategory] = [
    "libXCTest.so": .xcTest, "libTesting.so": .swiftTesting,
    "lib_TestingInternals.so": .swiftTesting, "libdispatch.so": .libdispatch,
    "libc.so.6": .libc, "libswiftCore.so": .swiftRuntime,
    "libswift_Concurrency.so": .swiftRuntime, "libFoundation.so": .foundation,
  ]
  private static let plumbingPrefixes: [(prefix: String, category: PlumbingCategory)] = [
    ("XCTest.", .xcTest), ("(extension in XCTest)", .xcTest), ("Testing.", .swiftTesting),
    ("(extension in Testing)", .swiftTesting), ("thunk for ", .thunk),
    ("reabstraction thunk", .thunk), ("dispatch thunk of ", .thunk),
    ("protocol witness for ", .thunk), ("outlined ", .thunk), ("_dispatch_", .libdispatch),
    ("dispatch_", .libdispatch), ("__libc_start", .libc), ("_start", .libc),
    ("swift_", .swiftRuntime), ("__swift", .swiftRuntime), ("swift::", .swiftRuntime),
    ("Swift.", .standardLibrary), ("(extension in Swift)", .standardLibrary),
    ("Foundation.", .foundation), ("(extension in Foundation)", .foundation),
    ("FoundationEssentials.", .foundation), ("(extension in FoundationEssentials)", .foundation),
  ]
  /// `TestfMp_`: the mangled name of what Swift Testing's `@Test` macro generates (its
  /// thunks, named after the test in debug and inside a private context in release).
  private static let plumbingMarkers: [(marker: String, category: PlumbingCategory)] = [
    ("__allTests__", .xcTest), ("__🟡$", .swiftTesting), ("__macro_local_", .swiftTesting),
    ("TestfMp_", .swiftTesting),
  ]

  /// `text` with the decimal digits after each `marker` (and the marker's ` #`) removed:
  /// `closure #12 in` becomes `closure in`.
  private static func removingNumbers(
    after marker: String, in text: String, keeping kept: String
  ) -> String {
    replacing(marker, with: kept, in: text) { $0.isASCII && $0.isNumber }
  }

  /// `text` with each run from `opening` to the next `closing` (inclusive) replaced.
  private static func replacingRuns(
    from opening: String, through closing: String, with replacement: String, in text: String
  ) -> String {
    guard text.contains(opening) else { return text }
    var result = ""
    var rest = Substring(text)
    while let start = rest.range(of: opening) {
      result += rest[..<start.lowerBound]
      guard let end = rest[start.upperBound...].range(of: closing) else {
        return result + rest[start.lowerBound...]
      }
      result += replacement
      rest = rest[end.upperBound...]
    }
    return result + rest
  }

  /// `text` with each `marker` and the identifier characters after it (letters, digits,
  /// `_`, `$`) replaced by `replacement`.
  private static func replacingTokens(
    after marker: String, with replacement: String, in text: String
  ) -> String {
    replacing(marker, with: replacement, in: text) {
      $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$")
    }
  }

  /// `text` with each `marker`, and the characters right after it that `isPart` accepts,
  /// replaced by `replacement`: the one scan both rules above use.
  private static func replacing(
    _ marker: String, with replacement: String, in text: String,
    dropping isPart: (Character) -> Bool
  ) -> String {
    guard text.contains(marker) else { return text }
    var result = ""
    var rest = Substring(text)
    while let range = rest.range(of: marker) {
      result += rest[..<range.lowerBound]
      result += replacement
      rest = rest[range.upperBound...].drop(while: isPart)
    }
    return result + rest
  }
}
