import Foundation
import TestSupport
import Testing

/// The project's shape rule: no function in `Sources/` (Swift or C) is over
/// ``FunctionLengths/limit`` lines, counted from the line of its name to its closing brace.
/// A long function hides more than one concern; the rule is checked here rather than by the
/// formatter, which has no such rule.
@Suite struct FunctionLengthTests {
  @Test func noFunctionInSourcesIsOverTheLimit() throws {
    let sources = PackageRoot.url.appendingPathComponent("Sources")
    var over: [String] = []
    var measured = 0
    let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
    while let file = enumerator?.nextObject() as? URL {
      let language: FunctionLengths.Language
      switch file.pathExtension {
      case "swift": language = .swift
      case "c": language = .c
      default: continue
      }
      let text = try String(contentsOf: file, encoding: .utf8)
      for function in FunctionLengths.functions(in: text, language: language) {
        measured += 1
        if function.lines > FunctionLengths.limit {
          let path = file.path.replacingOccurrences(of: PackageRoot.url.path + "/", with: "")
          over.append("\(path):\(function.firstLine): \(function.lines) lines")
        }
      }
    }
    // The scanner found the functions at all (a scanner that finds none would pass).
    #expect(measured > 1000)
    let list = over.joined(separator: "\n")
    #expect(over == [], "functions over \(FunctionLengths.limit) lines:\n\(list)")
  }

  @Test func swiftBodiesAreMeasuredFromTheNameToTheClosingBrace() {
    let text = """
      struct S {
        /// A brace in a comment { and in a string "}" do not count.
        func f(_ x: Int) -> Int {
          let s = "{{"
          let t = \"\"\"
            }
            \"\"\"
          return x + s.count + t.count
        }
        init(
          a: Int
        ) {
          _ = a
        }
        var computed: Int { [1].map(Int.init).count }
      }
      """
    let functions = FunctionLengths.functions(in: text, language: .swift)
    #expect(functions.map(\.firstLine) == [3, 10])
    #expect(functions.map(\.lines) == [7, 5])
  }

  @Test func cBodiesAreMeasuredFromTheSignatureToTheClosingBrace() {
    let text = """
      static const char *names[] = {
        "a", "b",
      };
      /* a comment { */
      static int f(int a,
                   int b) {
        if (a) { return '{'; }
        return b;
      }
      struct s { int x; };
      int g(void)
      {
        return 0;
      }
      """
    let functions = FunctionLengths.functions(in: text, language: .c)
    #expect(functions.map(\.firstLine) == [5, 11])
    #expect(functions.map(\.lines) == [5, 4])
  }
}

/// Finds function bodies in Swift or C text by their braces, with strings, character
/// literals and comments skipped. Not a parser: enough for the code this package writes,
/// which the tests above pin.
enum FunctionLengths {
  static let limit = 60

  enum Language { case swift, c }

  struct Function: Equatable {
    var firstLine: Int
    var lines: Int
  }

  /// One significant character of the text: a brace, a parenthesis, `;`, `=`, `.`, or the first
  /// character of a word, with its line.
  private struct Token {
    var character: Character
    var word: String
    var line: Int
  }

  static func functions(in text: String, language: Language) -> [Function] {
    let tokens = tokenize(text)
    switch language {
    case .swift: return swiftFunctions(tokens)
    case .c: return cFunctions(tokens)
    }
  }

  /// A Swift function starts at `func`, `init`, `deinit` or `subscript`; its body is the
  /// first `{` after it outside its parameters, before the next such word.
  private static func swiftFunctions(_ tokens: [Token]) -> [Function] {
    let starters: Set<String> = ["func", "init", "deinit", "subscript"]
    var found: [Function] = []
    for (index, token) in tokens.enumerated() where starters.contains(token.word) {
      // `String.init`, `.init(…)`: a reference, not a declaration.
      if index > 0 && tokens[index - 1].character == "." { continue }
      var parentheses = 0
      var cursor = index + 1
      while cursor < tokens.count {
        let character = tokens[cursor].character
        if character == "(" || character == "[" { parentheses += 1 }
        if character == ")" || character == "]" { parentheses -= 1 }
        if parentheses < 0 || parentheses == 0 && (character == "{" || character == "}") { break }
        // A requirement without a body (in a protocol) ends before the next declaration.
        if parentheses == 0 && starters.contains(tokens[cursor].word) { break }
        cursor += 1
      }
      guard cursor < tokens.count, tokens[cursor].character == "{",
        let end = closingBrace(tokens, from: cursor)
      else { continue }
      found.append(Function(firstLine: token.line, lines: tokens[end].line - token.line + 1))
    }
    return found
  }

  /// A C function is a `{` at file scope right after a `)`; it starts on the line of the
  /// word before its parameter list's `(`.
  private static func cFunctions(_ tokens: [Token]) -> [Function] {
    var found: [Function] = []
    var depth = 0
    var index = 0
    while index < tokens.count {
      let character = tokens[index].character
      if character == "{" && depth == 0, index > 0, tokens[index - 1].character == ")",
        let open = openingParenthesis(tokens, before: index - 1),
        let end = closingBrace(tokens, from: index)
      {
        let firstLine = tokens[max(0, open - 1)].line
        found.append(Function(firstLine: firstLine, lines: tokens[end].line - firstLine + 1))
        index = end + 1
        continue
      }
      if character == "{" { depth += 1 }
      if character == "}" { depth -= 1 }
      index += 1
    }
    return found
  }

  private static func closingBrace(_ tokens: [Token], from open: Int) -> Int? {
    var depth = 0
    for index in open..<tokens.count {
      if tokens[index].character == "{" { depth += 1 }
      if tokens[index].character == "}" {
        depth -= 1
        if depth == 0 { return index }
      }
    }
    return nil
  }

  private static func openingParenthesis(_ tokens: [Token], before close: Int) -> Int? {
    var depth = 0
    for index in stride(from: close, through: 0, by: -1) {
      if tokens[index].character == ")" { depth += 1 }
      if tokens[index].character == "(" {
        depth -= 1
        if depth == 0 { return index }
      }
    }
    return nil
  }

  private static func tokenize(_ text: String) -> [Token] {
    let characters = Array(text)
    var tokens: [Token] = []
    var line = 1
    var index = 0
    func peek(_ offset: Int) -> Character? {
      index + offset < characters.count ? characters[index + offset] : nil
    }
    /// Skips to just past `terminator`, counting lines; a backslash escapes one character.
    func skip(past terminator: String, escapes: Bool) {
      let end = Array(terminator)
      while index < characters.count {
        if escapes && characters[index] == "\\" {
          index += 2
          continue
        }
        if characters[index] == "\n" { line += 1 }
        if Array(characters[index..<min(characters.count, index + end.count)]) == end {
          index += end.count
          return
        }
        index += 1
      }
    }
    while index < characters.count {
      let character = characters[index]
      if character == "\n" {
        line += 1
        index += 1
      } else if character == "/" && peek(1) == "/" {
        while index < characters.count && characters[index] != "\n" { index += 1 }
      } else if character == "/" && peek(1) == "*" {
        index += 2
        skip(past: "*/", escapes: false)
      } else if character == "\"" && peek(1) == "\"" && peek(2) == "\"" {
        index += 3
        skip(past: "\"\"\"", escapes: true)
      } else if character == "\"" || character == "'" {
        index += 1
        skip(past: String(character), escapes: true)
      } else if character.isLetter || character == "_" {
        var word = ""
        while index < characters.count
          && (characters[index].isLetter || characters[index].isNumber || characters[index] == "_")
        {
          word.append(characters[index])
          index += 1
        }
        tokens.append(Token(character: word.first ?? "_", word: word, line: line))
      } else {
        if "{}()[];=.".contains(character) {
          tokens.append(Token(character: character, word: "", line: line))
        }
        index += 1
      }
    }
    return tokens
  }
}
