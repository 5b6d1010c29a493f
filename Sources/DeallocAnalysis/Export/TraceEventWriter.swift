import DeallocLog
import TextEscaping

/// Writes Chrome trace-event JSON straight into bytes: one event per line, keys in a fixed
/// order, timestamps as exact microseconds.
///
/// Why bytes and not `String` or `JSONValue`: the exporter writes an event or two per log
/// record, so per-event arrays, dictionaries and string growth would dominate its time.
/// Strings are escaped by `Escaping.json(_:into:)` (its bytes form), as in every JSON output.
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
    Escaping.json(value, into: &bytes)
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
    Escaping.jsonContents(value, into: &bytes)
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
}
