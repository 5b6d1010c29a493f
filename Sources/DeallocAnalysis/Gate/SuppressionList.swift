import DeallocLog
import Foundation

/// The suppressions of one file, in the order they were written.
///
/// The format, one suppression per line:
///
///     # a comment line
///     type:Feed.ImageDecoder*          decoder pool keeps two decoders for the whole run
///     frame:*ThirdPartySDK.Session*    # the SDK caches its session (FEED-812)
///     frame:"closure #1 in Feed.*"     a pattern with spaces or '#' goes in double quotes
///     id:3fa2c4e1b0d9                  one finding, by its id (12 hex digits, no glob)
///
/// The pattern ends at the first space or tab unless it is quoted (`\"` is a quote inside
/// quotes). Everything after it is the reason; a `#` right before the reason is dropped, so
/// both styles above read the same. Blank lines and lines starting with `#` are skipped.
///
/// `#` starts a comment: a whole line, or the reason after a pattern, so it must follow a
/// space or a tab. A `#` that touches an unquoted pattern (`type:Foo#x`) is refused rather
/// than guessed at: read as a comment it would silently widen or empty the pattern, read as
/// part of it a comment would be lost. To match a `#` (Swift's `closure #1`), quote the
/// pattern or escape it as `\#`.
///
/// Why strict: a suppression that silently matches nothing (a typo in `typ:`) would hide
/// nothing and be forgotten, so every line that is not a comment must parse, or the gate
/// refuses to run (exit status 2) with the file and line.
public struct SuppressionList: Sendable, Equatable {
  public var suppressions: [Suppression]

  public init(_ suppressions: [Suppression] = []) {
    self.suppressions = suppressions
  }

  /// Reads and parses the file at `path`.
  /// - Throws: ``AnalysisError/suppressionsUnreadable(path:reason:)`` or
  ///   ``AnalysisError/badSuppression(file:line:message:)``.
  public static func load(path: String) throws(AnalysisError) -> SuppressionList {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .suppressionsUnreadable(path: path, reason: "no such file")
    }
    guard !isDirectory.boolValue else {
      throw .suppressionsUnreadable(path: path, reason: "is a directory")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .suppressionsUnreadable(path: path, reason: "permission denied or I/O error")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw .suppressionsUnreadable(path: path, reason: "not UTF-8 text")
    }
    return try parse(text, file: path)
  }

  /// Parses the text of a suppressions file; `file` names it in errors.
  /// - Throws: ``AnalysisError/badSuppression(file:line:message:)`` for the first bad line.
  public static func parse(_ text: String, file: String) throws(AnalysisError) -> SuppressionList {
    var suppressions: [Suppression] = []
    var number = 0
    // "\r\n" is one Character in Swift, so a plain split on "\n" would miss Windows lines.
    let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    for rawLine in lines {
      number += 1
      var line = Substring(rawLine)
      if line.last == "\r" { line = line.dropLast() }
      let trimmed = line.drop { $0 == " " || $0 == "\t" }
      if trimmed.isEmpty || trimmed.first == "#" { continue }
      do {
        suppressions.append(try parseLine(trimmed, file: file, line: number))
      } catch {
        throw .badSuppression(file: file, line: number, message: error.message)
      }
    }
    return SuppressionList(suppressions)
  }

  private struct LineError: Error {
    var message: String
  }

  private static func parseLine(
    _ text: Substring, file: String, line: Int
  ) throws(LineError) -> Suppression {
    guard let colon = text.firstIndex(of: ":") else {
      throw LineError(
        message:
          "'\(text)' is not a suppression; write type:GLOB, frame:GLOB or id:HASH, then a reason")
    }
    let kind = text[..<colon]
    guard let target = Suppression.Target(rawValue: String(kind)) else {
      throw LineError(
        message: "unknown suppression kind '\(kind)'; use type:GLOB, frame:GLOB or id:HASH")
    }
    var rest = text[text.index(after: colon)...]
    var pattern: String
    if rest.first == "\"" {
      (pattern, rest) = try quoted(rest.dropFirst())
    } else {
      let end = rest.firstIndex { $0 == " " || $0 == "\t" } ?? rest.endIndex
      pattern = String(rest[..<end])
      rest = rest[end...]
      if hasUnescapedHash(pattern) {
        throw LineError(
          message:
            "'#' inside the pattern '\(pattern)': put a space before a comment, or quote"
            + " (\(kind):\"\(pattern)\") or escape (\\#) a '#' to match")
      }
    }
    guard !pattern.isEmpty else {
      throw LineError(message: "empty pattern after '\(kind):'")
    }
    if target == .id {
      // Strict: an id that is not one would match nothing and be forgotten.
      guard let id = FindingID(parsing: pattern) else {
        throw LineError(
          message:
            "'\(pattern)' is not a finding id; an id is \(FindingID.length) hex digits, as"
            + " the reports print it (id:3fa2c4e1b0d9)")
      }
      pattern = id.hex
    }
    let glob: Glob
    do {
      glob = try Glob(pattern)
    } catch {
      throw LineError(message: "bad pattern '\(pattern)': \(error)")
    }
    if let first = rest.first, first != " " && first != "\t" {
      throw LineError(message: "expected a space between the closing quote and the reason")
    }
    var reason = rest.drop { $0 == " " || $0 == "\t" }
    if reason.first == "#" { reason = reason.dropFirst().drop { $0 == " " || $0 == "\t" } }
    while let last = reason.last, last == " " || last == "\t" { reason = reason.dropLast() }
    return Suppression(target: target, glob: glob, reason: String(reason), file: file, line: line)
  }

  /// Whether `pattern` holds a `#` that no `\` escapes.
  private static func hasUnescapedHash(_ pattern: String) -> Bool {
    var escaped = false
    for character in pattern {
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "#" {
        return true
      }
    }
    return false
  }

  /// Reads a quoted pattern (after its opening quote); returns it and the rest of the line.
  private static func quoted(_ text: Substring) throws(LineError) -> (String, Substring) {
    var pattern = ""
    var index = text.startIndex
    while index < text.endIndex {
      let character = text[index]
      if character == "\"" {
        return (pattern, text[text.index(after: index)...])
      }
      if character == "\\", text.index(after: index) < text.endIndex,
        text[text.index(after: index)] == "\""
      {
        pattern.append("\"")
        index = text.index(index, offsetBy: 2)
        continue
      }
      pattern.append(character)
      index = text.index(after: index)
    }
    throw LineError(message: "the quoted pattern is never closed by '\"'")
  }
}
