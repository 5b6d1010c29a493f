import DeallocAnalysis

/// `--library GLOB` (repeatable), shared by report, check, diff and explain: modules whose
/// census leaks are the libraries', not the program's (issue 36).
enum LibraryOption {
  static let name = "library"
  static let valued = ["--library": name]

  /// The globs given, each checked.
  static func globs(_ parsed: Arguments) throws(UsageError) -> [Glob] {
    var globs: [Glob] = []
    for text in parsed.values(name) {
      do {
        globs.append(try Glob(text))
      } catch {
        throw UsageError("--library: bad pattern '\(text)': \(error)")
      }
    }
    return globs
  }
}
