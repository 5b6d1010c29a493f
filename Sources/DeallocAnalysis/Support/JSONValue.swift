import DeallocLog
import TextEscaping

/// A JSON value whose objects keep their key order, for output formats that are read by
/// scripts and diffed in golden files.
///
/// Why not `JSONEncoder`: key order and number formatting must be stable across platforms
/// and releases, and renderers build documents of mixed shapes. The trade-off is a little
/// more code per renderer.
public indirect enum JSONValue: Sendable, Equatable {
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
  public func serialized(pretty: Bool = false) -> String {
    var out = ""
    write(to: &out, pretty: pretty, indent: 0)
    return out
  }

  private func write(to out: inout String, pretty: Bool, indent: Int) {
    switch self {
    case .null: out += "null"
    case .bool(let value): out += value ? "true" : "false"
    case .int(let value): out += String(value)
    case .double(let value):
      if !value.isFinite {
        out += "null"
      } else if value == value.rounded(), abs(value) < 1e15 {
        out += String(Int64(value))
      } else {
        out += String(value)
      }
    case .string(let value): Escaping.json(value, into: &out)
    case .array(let values):
      if values.isEmpty {
        out += "[]"
        return
      }
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += "," }
        if pretty { newline(&out, indent + 1) }
        value.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty { newline(&out, indent) }
      out += "]"
    case .object(let members):
      if members.isEmpty {
        out += "{}"
        return
      }
      out += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out += "," }
        if pretty { newline(&out, indent + 1) }
        Escaping.json(key, into: &out)
        out += pretty ? ": " : ":"
        value.write(to: &out, pretty: pretty, indent: indent + 1)
      }
      if pretty { newline(&out, indent) }
      out += "}"
    }
  }

  private func newline(_ out: inout String, _ indent: Int) {
    out += "\n"
    out += String(repeating: "  ", count: indent)
  }
}
