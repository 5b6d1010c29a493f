/// Chrome trace-event JSON pieces: timestamps in microseconds, and one event per line.
///
/// Why hand-written: the exporter streams millions of events, and a `JSONValue` tree per event
/// would cost more than the reading. Strings go through ``JSONValue/quote(_:into:)``, so the
/// escaping is the same as every other JSON output of the tools.
enum TraceEventEncoding {
  /// Nanoseconds as microseconds, exactly: `1200` → `1.2`, `5000000` → `5000`.
  static func microseconds(_ nanoseconds: Int64) -> String {
    let negative = nanoseconds < 0
    let value = nanoseconds.magnitude
    let whole = value / 1000
    let fraction = value % 1000
    var text = negative ? "-\(whole)" : "\(whole)"
    if fraction != 0 {
      var digits = String(fraction)
      digits = String(repeating: "0", count: 3 - digits.count) + digits
      while digits.hasSuffix("0") { digits.removeLast() }
      text += "." + digits
    }
    return text
  }

  /// An argument value of an event.
  enum Value {
    case string(String)
    case int(Int64)
    case bool(Bool)
    /// Pre-encoded JSON (a number with a fraction, say).
    case raw(String)
  }

  /// Appends `{"ph":…,…}` for one event; `fields` are written in order, `args` last.
  static func append(
    _ phase: String, _ fields: [(String, Value)], args: [(String, Value?)] = [],
    into out: inout String
  ) {
    out += "{\"ph\":\"" + phase + "\""
    for (key, value) in fields {
      out += ",\"" + key + "\":"
      write(value, into: &out)
    }
    let present = args.compactMap { key, value in value.map { (key, $0) } }
    if !present.isEmpty {
      out += ",\"args\":{"
      for (index, (key, value)) in present.enumerated() {
        if index > 0 { out += "," }
        JSONValue.quote(key, into: &out)
        out += ":"
        write(value, into: &out)
      }
      out += "}"
    }
    out += "}"
  }

  private static func write(_ value: Value, into out: inout String) {
    switch value {
    case .string(let text): JSONValue.quote(text, into: &out)
    case .int(let number): out += String(number)
    case .bool(let flag): out += flag ? "true" : "false"
    case .raw(let json): out += json
    }
  }
}
