/// A shell-style wildcard pattern, matched against a whole string: `*` matches any run of
/// characters (dots, spaces and slashes included), `?` exactly one, `[abc]`, `[a-z]` and
/// `[!a-z]` (or `[^a-z]`) one of a set, and `\` makes the next character literal.
///
/// Why our own: Foundation has no portable `fnmatch`, and Glibc's treats `/` and locale
/// rules in ways that surprise on Swift type names and demangled symbols. Matching works on
/// `Character`s, so a glob never splits a composed character. The trade-off: no `**` or
/// brace alternatives; write two suppressions instead.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
  enum Token: Sendable, Hashable {
    case literal(Character)
    case anyOne
    case anyRun
    case set(CharacterSet, negated: Bool)
  }

  /// The members of a `[...]` class: single characters and inclusive ranges.
  struct CharacterSet: Sendable, Hashable {
    var singles: Set<Character> = []
    var ranges: [ClosedRange<Character>] = []

    func contains(_ character: Character) -> Bool {
      singles.contains(character) || ranges.contains { $0.contains(character) }
    }
  }

  /// A pattern that cannot be compiled, with the column (1-based, in characters) at fault.
  public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var column: Int
    public var message: String
    public var description: String { "column \(column): \(message)" }
  }

  /// The pattern as written.
  public let pattern: String
  let tokens: [Token]

  /// Compiles `pattern`.
  /// - Throws: ``SyntaxError`` for an unclosed `[`, an empty class, a reversed range or a
  ///   trailing `\`.
  public init(_ pattern: String) throws(SyntaxError) {
    self.pattern = pattern
    let characters = Array(pattern)
    var tokens: [Token] = []
    var index = 0
    while index < characters.count {
      let character = characters[index]
      switch character {
      case "*":
        if tokens.last != .anyRun { tokens.append(.anyRun) }
        index += 1
      case "?":
        tokens.append(.anyOne)
        index += 1
      case "\\":
        guard index + 1 < characters.count else {
          throw SyntaxError(column: index + 1, message: "'\\' at the end escapes nothing")
        }
        tokens.append(.literal(characters[index + 1]))
        index += 2
      case "[":
        let (set, negated, next) = try Self.parseSet(characters, openingAt: index)
        tokens.append(.set(set, negated: negated))
        index = next
      default:
        tokens.append(.literal(character))
        index += 1
      }
    }
    self.tokens = tokens
  }

  /// Parses the class opening at `start`; returns it and the index after its `]`.
  private static func parseSet(
    _ characters: [Character], openingAt start: Int
  ) throws(SyntaxError) -> (CharacterSet, Bool, Int) {
    var index = start + 1
    var negated = false
    if index < characters.count, characters[index] == "!" || characters[index] == "^" {
      negated = true
      index += 1
    }
    var set = CharacterSet()
    var members = 0
    // A `]` right after the opening (or the negation) is a member, as in POSIX.
    while index < characters.count, characters[index] != "]" || members == 0 {
      var low = characters[index]
      if low == "\\" {
        guard index + 1 < characters.count else { break }
        index += 1
        low = characters[index]
      }
      index += 1
      if index + 1 < characters.count, characters[index] == "-", characters[index + 1] != "]" {
        var high = characters[index + 1]
        index += 2
        if high == "\\", index < characters.count {
          high = characters[index]
          index += 1
        }
        guard low <= high else {
          throw SyntaxError(
            column: start + 1, message: "range '\(low)-\(high)' in '[...]' is reversed")
        }
        set.ranges.append(low...high)
      } else {
        set.singles.insert(low)
      }
      members += 1
    }
    guard index < characters.count else {
      throw SyntaxError(column: start + 1, message: "'[' is never closed by ']'")
    }
    return (set, negated, index + 1)
  }

  /// Whether the whole of `text` matches.
  ///
  /// Backtracks only to the most recent `*`, so the cost is at most
  /// O(pattern × text) and never exponential.
  public func matches(_ text: String) -> Bool {
    let characters = Array(text)
    var t = 0
    var p = 0
    var starP = -1
    var starT = 0
    while t < characters.count {
      if p < tokens.count, tokens[p] == .anyRun {
        starP = p
        starT = t
        p += 1
      } else if p < tokens.count, Self.matchesOne(tokens[p], characters[t]) {
        p += 1
        t += 1
      } else if starP >= 0 {
        starT += 1
        t = starT
        p = starP + 1
      } else {
        return false
      }
    }
    while p < tokens.count, tokens[p] == .anyRun { p += 1 }
    return p == tokens.count
  }

  private static func matchesOne(_ token: Token, _ character: Character) -> Bool {
    switch token {
    case .literal(let literal): return literal == character
    case .anyOne: return true
    case .anyRun: return false
    case .set(let set, let negated): return set.contains(character) != negated
    }
  }

  public var description: String { pattern }
}
