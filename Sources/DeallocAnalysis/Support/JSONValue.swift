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

  func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
    switch self {
    case .null: out.append(contentsOf: "null".utf8)
    case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
    case .int(let value): Escaping.appendDecimal(value, to: &out)
    case .double(let value):
      if !value.isFinite {
        out.append(contentsOf: "null".utf8)
      } else if value == value.rounded(), abs(value) < 1e15 {
        Escaping.appendDecimal(Int64(value), to: &out)
      } else {
        out.append(contentsOf: String(value).utf8)
      }
    case .string(let value): Escaping.json(value, into: &out)
    case .array(let values):
      if values.isEmpty {
        out.append(contentsOf: "[]".utf8)
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
        out.append(contentsOf: "{}".utf8)
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
  static func newline(_ out: inout [UInt8], _ indent: Int) {
    out.append(UInt8(ascii: "\n"))
    var left = 2 * indent
    while left > 0 {
      let run = min(left, Self.spaces.count)
      out.append(contentsOf: Self.spaces[..<run])
      left -= run
    }
  }

  private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)
}
