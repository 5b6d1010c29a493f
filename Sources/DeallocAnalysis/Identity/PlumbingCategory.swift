/// What a plumbing frame (``SymbolNormalization/isPlumbing(_:)``) belongs to, for the line
/// that folds such frames in every output: "… 14 frames of XCTest and libdispatch".
///
/// Why a category and not the module: a frame without a module (a symbol the recorder
/// named) still belongs somewhere, and one word per kind reads better than a list of
/// library paths.
public enum PlumbingCategory: String, Sendable, CaseIterable, Comparable {
  case xcTest = "XCTest"
  case swiftTesting = "Swift Testing"
  case libdispatch
  case swiftRuntime = "the Swift runtime"
  /// The standard library's functions (`Swift.…`), specialized into the program or not: a
  /// `generic specialization <Feed.Node> of Swift.Array.append` is the library's code.
  case standardLibrary = "the Swift standard library"
  case foundation = "Foundation"
  case thunk = "compiler thunks"
  case libc

  /// The name the fold line uses.
  public var name: String { rawValue }

  /// The order of the cases, so that a fold line names its categories the same way in
  /// every output whatever order the frames came in.
  public static func < (lhs: Self, rhs: Self) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}
