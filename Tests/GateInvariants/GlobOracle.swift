import DeallocAnalysis
import Foundation

/// The fuzzer's oracle for the glob matcher, apart from the library because only the fuzzer
/// and the tests use it.
extension Glob {
  /// The same answer as ``matches(_:)`` by the textbook table (pattern × text time and
  /// memory): the oracle the fuzzer compares the fast matcher with.
  package func referenceMatches(_ text: String) -> Bool {
    let characters = Array(text)
    // row[j]: tokens[..<i] match characters[..<j].
    var row = [true] + Array(repeating: false, count: characters.count)
    for token in tokens {
      var next = Array(repeating: false, count: characters.count + 1)
      if token == .anyRun { next[0] = row[0] }
      for j in characters.indices {
        if token == .anyRun {
          next[j + 1] = row[j + 1] || next[j]
        } else {
          next[j + 1] = row[j] && Self.matchesOne(token, characters[j])
        }
      }
      row = next
    }
    return row[characters.count]
  }
}
