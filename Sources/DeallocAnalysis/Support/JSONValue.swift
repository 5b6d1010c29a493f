import DeallocLog
import TextEscaping

/// A JSON value whose objects keep their key order, for output formats that are read by
/// scripts and diffed in golden files.
///
/// Why not `JSONEncoder`: key order and number formatting must be stable across platforms
/// and releases, and renderers build documents of mixed shapes. The trade-off is a little
/// more code per renderer.
///
/// Not `indirect`: arrays and member lists already hold their elements out of line, and an
/// indirect enum boxed every number and string too, an allocation per node that a leak-heavy
/// report's document paid hundreds of thousands of times.
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([(String, JSONValue)])

  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    lhs.serialized() == rhs.serialized()
  }

  /// An integer value.
  public static func int(_ value: Int) -> JSONValue { .int(Int64(value)) }

  /// A string, or `null` when absent.
  public static func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }

  /// An integer, or `null` when absent.
  public static func optional(_ value: Int64?) -> JSONValue { value.map { .int($0) } ?? .null }

  /// The text: compact, or indented by two spaces per level.
  ///
  /// Written as UTF-8 bytes and made a `String` once: appending to a `String` piece by piece
  /// was most of the time a leak-heavy report spends rendering.
  public func serialized(pretty: Bool = false) -> String {
    var out: [UInt8] = []
    write(to: &out, pretty: pretty, indent: 0)
    return String(decoding: out, as: UTF8.self)
  }

  func write(to out: inout some ByteSink, pretty: Bool, indent: Int) {
    switch self {
    case .null: Self.append("null", to: &out)
    case .bool(let value): Self.append(value ? "true" : "false", to: &out)
    case .int(let value): Escaping.appendDecimal(value, to: &out)
    case .double(let value):
      if !value.isFinite {
        Self.append("null", to: &out)
      } else if value == value.rounded(), abs(value) < 1e15 {
        Escaping.appendDecimal(Int64(value), to: &out)
      } else {
        var text = String(value)
        text.withUTF8 { out.append(contentsOf: $0) }
      }
    case .string(let value): Escaping.json(value, into: &out)
    case .array(let values):
      if values.isEmpty {
        Self.append("[]", to: &out)
        return
      }
      out.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { Self.newline(&out, indent + 1) }
        value.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty { Self.newline(&out, indent) }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      if members.isEmpty {
        Self.append("{}", to: &out)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { Self.newline(&out, indent + 1) }
        Escaping.json(key, into: &out)
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(UInt8(ascii: " ")) }
        value.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty { Self.newline(&out, indent) }
      out.append(UInt8(ascii: "}"))
    }
  }

  /// A line break and `indent` levels of two spaces.
  ///
  /// Appended as one slice of a line break followed by spaces: a pretty report writes a line
  /// per member, and a loop over an array of spaces cost more than the spaces.
  @inline(__always)
  static func newline(_ out: inout some ByteSink, _ indent: Int) {
    if 2 * indent <= deepestInlineIndent {
      out.append(contentsOf: lineBreakAndIndent(indent))
    } else {
      deepNewline(&out, indent)
    }
  }

  /// Spaces past which an indentation is no longer one run of ``lineBreakAndSpaces``.
  static var deepestInlineIndent: Int { lineBreakAndSpaces.count - 1 }

  /// A line break and `indent` levels of indentation, for `2 * indent` up to
  /// ``deepestInlineIndent``.
  @inline(__always)
  static func lineBreakAndIndent(_ indent: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: lineBreakAndSpaces[..<(1 + 2 * indent)])
  }

  /// Appends a literal's bytes.
  @inline(__always)
  static func append(_ text: StaticString, to out: inout some ByteSink) {
    text.withUTF8Buffer { out.append(contentsOf: $0) }
  }

  /// ``newline(_:_:)`` for a depth past what ``lineBreakAndSpaces`` covers.
  private static func deepNewline(_ out: inout some ByteSink, _ indent: Int) {
    let spaces = UnsafeBufferPointer(rebasing: lineBreakAndSpaces.dropFirst())
    out.append(UInt8(ascii: "\n"))
    var left = 2 * indent
    while left > 0 {
      let run = min(left, spaces.count)
      out.append(contentsOf: UnsafeBufferPointer(rebasing: spaces[..<run]))
      left -= run
    }
  }

  /// A line break and 64 levels of indentation, made once and never freed or written again
  /// (hence safe to share): a pointer, because reading it costs no reference counting.
  private nonisolated(unsafe) static let lineBreakAndSpaces: UnsafeBufferPointer<UInt8> = {
    let line = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 + 2 * 64)
    line.initialize(repeating: UInt8(ascii: " "))
    line[0] = UInt8(ascii: "\n")
    return UnsafeBufferPointer(line)
  }()
}
