/// A shell-style wildcard pattern, matched against a whole string: `*` matches any run of
/// characters (dots, spaces and slashes included), `?` exactly one, `[abc]`, `[a-z]` and
/// `[!a-z]` (or `[^a-z]`) one of a set, and `\` makes the next character literal.
///
/// Why our own: Foundation has no portable `fnmatch`, and Glibc's treats `/` and locale
/// rules in ways that surprise on Swift type names and demangled symbols. Matching works on
/// `Character`s, so a glob never splits a composed character. The trade-off: no `**` or
/// brace alternatives; write two suppressions instead.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
  package enum Token: Sendable, Hashable {
    case literal(Character)
    case anyOne
    case anyRun
    case set(CharacterSet, negated: Bool)
  }

  /// The members of a `[...]` class: single characters and inclusive ranges.
  package struct CharacterSet: Sendable, Hashable {
    var singles: Set<Character> = []
    var ranges: [ClosedRange<Character>] = []

    package func contains(_ character: Character) -> Bool {
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
  package let tokens: [Token]
  let compiled: Compiled

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
    self.compiled = Compiled(tokens)
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
  /// Near-linear, because a suppressions file of 200,000 lines against a 100,000-character
  /// type name once took 278 s (each match first copied the whole name into an array):
  /// the pattern's literal head and tail (compiled once, in ``init(_:)``) are compared
  /// first, from each end of `text` without copying it, which settles most patterns in the
  /// length of their literals; what lies between is matched segment by segment (the parts
  /// between `*`s), each segment at its leftmost place, which is enough for a glob and never
  /// backtracks. A segment of literals is found with Knuth–Morris–Pratt, in time linear in
  /// the text; only a segment holding `?` or a `[...]` is tried at each position, in time
  /// text × segment.
  public func matches(_ text: String) -> Bool {
    let compiled = self.compiled
    // The literal head, from the front.
    var lower = text.startIndex
    for character in compiled.head {
      guard lower < text.endIndex, text[lower] == character else { return false }
      lower = text.index(after: lower)
    }
    // The literal tail, from the back, never overlapping the head.
    var upper = text.endIndex
    for character in compiled.tail.reversed() {
      guard upper > lower else { return false }
      let before = text.index(before: upper)
      guard text[before] == character else { return false }
      upper = before
    }
    let middle = text[lower..<upper]
    let segments = compiled.segments
    guard compiled.hasStar else {
      // No `*`: the middle (whatever the head and tail left) matches position by position.
      return Self.matchesAt(segments[0], middle, from: middle.startIndex) == middle.endIndex
    }
    // segments[0] is anchored at the start, the last at the end, the others float.
    guard var position = Self.matchesAt(segments[0], middle, from: middle.startIndex) else {
      return false
    }
    let last = segments[segments.count - 1]
    for segment in segments.dropFirst().dropLast() {
      guard let end = Self.find(segment, in: middle, from: position) else { return false }
      position = end
    }
    // The last segment ends the text: it starts `last.count` characters before the end.
    var start = middle.endIndex
    for _ in 0..<last.count {
      guard start > position else { return false }
      start = middle.index(before: start)
    }
    return Self.matchesAt(last, middle, from: start) == middle.endIndex
  }

  /// The pattern as matching uses it: the literal head and tail, and the tokens between
  /// them split at each `*` (with `hasStar`, the first segment is anchored at the start and
  /// the last at the end; without, there is one segment).
  struct Compiled: Sendable, Hashable {
    var head: [Character] = []
    var tail: [Character] = []
    var segments: [[Token]] = [[]]
    var hasStar = false

    init(_ tokens: [Token]) {
      var index = 0
      while index < tokens.count, case .literal(let character) = tokens[index] {
        head.append(character)
        index += 1
      }
      var end = tokens.count
      while end > index, case .literal(let character) = tokens[end - 1] {
        tail.insert(character, at: 0)
        end -= 1
      }
      for token in tokens[index..<end] {
        if token == .anyRun {
          hasStar = true
          segments.append([])
        } else {
          segments[segments.count - 1].append(token)
        }
      }
      if !hasStar {
        // All literals, or literals around `?`/`[...]` only: nothing floats.
        segments = [Array(tokens[index..<end])]
      }
    }
  }

  /// Whether `character` is one that `token` (not `anyRun`, which matches runs) matches.
  package static func matchesOne(_ token: Token, _ character: Character) -> Bool {
    switch token {
    case .literal(let literal): return literal == character
    case .anyOne: return true
    case .anyRun: return false
    case .set(let set, let negated): return set.contains(character) != negated
    }
  }

  /// Where `segment` ends when matched at `start` in `text`, or `nil` when it does not.
  private static func matchesAt(_ segment: [Token], _ text: Substring, from start: String.Index)
    -> String.Index?
  {
    var index = start
    for token in segment {
      guard index < text.endIndex, matchesOne(token, text[index]) else { return nil }
      index = text.index(after: index)
    }
    return index
  }

  /// Where the leftmost match of `segment` at or after `start` ends, or `nil`.
  private static func find(_ segment: [Token], in text: Substring, from start: String.Index)
    -> String.Index?
  {
    if segment.isEmpty { return start }
    var literals: [Character] = []
    for token in segment {
      guard case .literal(let character) = token else {
        // `?` or `[...]` inside: try each position (text × segment).
        var position = start
        while true {
          if let end = matchesAt(segment, text, from: position) { return end }
          guard position < text.endIndex else { return nil }
          position = text.index(after: position)
        }
      }
      literals.append(character)
    }
    // Knuth–Morris–Pratt: the failure table, then one pass over the text.
    var failure = [0] + Array(repeating: 0, count: max(0, literals.count - 1))
    var k = 0
    for i in literals.indices.dropFirst() {
      while k > 0 && literals[i] != literals[k] { k = failure[k - 1] }
      if literals[i] == literals[k] { k += 1 }
      failure[i] = k
    }
    var matched = 0
    var index = start
    while index < text.endIndex {
      let character = text[index]
      while matched > 0 && character != literals[matched] { matched = failure[matched - 1] }
      if character == literals[matched] { matched += 1 }
      index = text.index(after: index)
      if matched == literals.count { return index }
    }
    return nil
  }

  public var description: String { pattern }
}
