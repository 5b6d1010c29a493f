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
    case .string(let value): Self.quote(value, into: &out)
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
        Self.quote(key, into: &out)
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

  /// Appends `text` as a JSON string literal, escaping quotes, backslashes and control
  /// characters (and nothing else, so non-ASCII text stays readable).
  public static func quote(_ text: String, into out: inout String) {
    out += "\""
    // Most strings need no escape: appended whole, not scalar by scalar (a leak-heavy report
    // quotes tens of thousands of names). 0xE2 leads U+2028 and U+2029 in UTF-8.
    if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0xE2 }) {
      out += text
      out += "\""
      return
    }
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{2028}": out += "\\u2028"
      case "\u{2029}": out += "\\u2029"
      default:
        if scalar.value < 0x20 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }

  /// `text` as a JSON string literal.
  public static func quote(_ text: String) -> String {
    var out = ""
    quote(text, into: &out)
    return out
  }
}
