/// Writes Chrome trace-event JSON straight into bytes: one event per line, keys in a fixed
/// order, timestamps as exact microseconds.
///
/// Why bytes and not `String` or `JSONValue`: the exporter writes an event or two per log
/// record, so per-event arrays, dictionaries and string growth would dominate its time.
/// Strings are escaped as ``JSONValue/quote(_:into:)`` does (quotes, backslashes, control
/// characters, U+2028/U+2029), byte by byte.
struct TraceEventWriter {
  private(set) var bytes: [UInt8] = []
  private var wroteEvent = false
  private var needsComma = false

  init(capacity: Int) {
    bytes.reserveCapacity(capacity)
  }

  /// Appends raw ASCII (the document's frame).
  mutating func raw(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// Hands the bytes written so far to `body` and starts over.
  mutating func drain(_ body: ([UInt8]) throws(AnalysisError) -> Void) throws(AnalysisError) {
    try body(bytes)
    bytes.removeAll(keepingCapacity: true)
  }

  /// Starts `{"ph":"X"` on a new line.
  mutating func begin(_ phase: UInt8) {
    if wroteEvent { bytes.append(contentsOf: [0x2C, 0x0A]) }  // ",\n"
    wroteEvent = true
    raw("{\"ph\":\"")
    bytes.append(phase)
    bytes.append(0x22)  // "
    needsComma = true
  }

  /// Ends the event.
  mutating func end() {
    bytes.append(0x7D)  // }
  }

  /// Opens `"args":{`.
  mutating func beginArgs() {
    beginObject("args")
  }

  /// Closes the args object.
  mutating func endArgs() {
    endObject()
  }

  /// Opens `"name":{` inside the current object.
  mutating func beginObject(_ name: StaticString) {
    key(name)
    bytes.append(0x7B)  // {
    needsComma = false
  }

  /// Closes the innermost object opened by ``beginObject(_:)``.
  mutating func endObject() {
    bytes.append(0x7D)
    needsComma = true
  }

  /// Closes the `traceEvents` array; what follows are the document's other members.
  mutating func endEvents() {
    raw("\n]")
    needsComma = true
  }

  private mutating func key(_ name: StaticString) {
    if needsComma { bytes.append(0x2C) }
    needsComma = true
    bytes.append(0x22)
    name.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: [0x22, 0x3A])  // ":
  }

  mutating func string(_ name: StaticString, _ value: String) {
    key(name)
    quote(value)
  }

  /// A string value the exporter spells itself (no escaping needed).
  mutating func string(_ name: StaticString, literal value: StaticString) {
    key(name)
    bytes.append(0x22)
    value.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(0x22)
  }

  /// A string value made of two parts (`"late dealloc: " + type`) without concatenating.
  mutating func string(_ name: StaticString, prefix: StaticString, _ value: String) {
    key(name)
    bytes.append(0x22)
    prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
    quoteBody(value)
    bytes.append(0x22)
  }

  mutating func int(_ name: StaticString, _ value: Int64) {
    key(name)
    integer(value)
  }

  mutating func bool(_ name: StaticString, _ value: Bool) {
    key(name)
    if value { raw("true") } else { raw("false") }
  }

  /// A time in nanoseconds, written as microseconds with up to three decimals (exact).
  mutating func microseconds(_ name: StaticString, _ nanoseconds: Int64) {
    key(name)
    if nanoseconds < 0 { bytes.append(0x2D) }
    let value = nanoseconds.magnitude
    unsigned(value / 1000)
    var fraction = value % 1000
    guard fraction != 0 else { return }
    bytes.append(0x2E)  // .
    var digits = 3
    while fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    var divisor: UInt64 = 1
    for _ in 1..<digits { divisor *= 10 }
    while divisor > 0 {
      bytes.append(0x30 + UInt8(fraction / divisor % 10))
      divisor /= 10
    }
  }

  /// An address as the log writes it: `"0x…"` in lower-case hex.
  mutating func address(_ name: StaticString, _ value: Address) {
    key(name)
    raw("\"0x")
    var started = false
    for shift in stride(from: 60, through: 0, by: -4) {
      let nibble = UInt8((value.rawValue >> UInt64(shift)) & 0xF)
      if nibble == 0 && !started && shift > 0 { continue }
      started = true
      bytes.append(nibble < 10 ? 0x30 + nibble : 0x57 + nibble)
    }
    bytes.append(0x22)
  }

  private mutating func integer(_ value: Int64) {
    if value < 0 { bytes.append(0x2D) }
    unsigned(value.magnitude)
  }

  private mutating func unsigned(_ value: UInt64) {
    var divisor: UInt64 = 1
    while value / divisor >= 10 { divisor *= 10 }
    while divisor > 0 {
      bytes.append(0x30 + UInt8(value / divisor % 10))
      divisor /= 10
    }
  }

  private mutating func quote(_ value: String) {
    bytes.append(0x22)
    quoteBody(value)
    bytes.append(0x22)
  }

  private mutating func quoteBody(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      var index = 0
      while index < utf8.count {
        let byte = utf8[index]
        switch byte {
        case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
        case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
        case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
        case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
        case 0..<0x20:
          raw("\\u00")
          bytes.append(Self.hex[Int(byte >> 4)])
          bytes.append(Self.hex[Int(byte & 0xF)])
        case 0xE2
        where index + 2 < utf8.count && utf8[index + 1] == 0x80
          && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9):
          // U+2028 and U+2029: valid JSON, but not valid JavaScript string literals.
          raw("\\u202")
          bytes.append(utf8[index + 2] == 0xA8 ? 0x38 : 0x39)
          index += 2
        default:
          bytes.append(byte)
        }
        index += 1
      }
    }
  }

  private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
