import DeallocLog
import TextEscaping

/// Chrome trace-event JSON on the shared compact writer (`CompactJSON`): one event per
/// line, keys in a fixed order, timestamps as exact microseconds. What is the trace
/// format's own is here: the events' separators, the phase, the microseconds.
struct TraceEventWriter {
  private var json: CompactJSON
  private var wroteEvent = false

  var bytes: [UInt8] { json.bytes }

  init(capacity: Int) {
    json = CompactJSON(capacity: capacity)
  }

  /// Appends raw ASCII (the document's frame).
  mutating func raw(_ text: StaticString) {
    json.raw(text)
  }

  /// Hands the bytes written so far to `body` and starts over.
  mutating func drain(_ body: ([UInt8]) throws(AnalysisError) -> Void) throws(AnalysisError) {
    try body(json.bytes)
    json.bytes.removeAll(keepingCapacity: true)
  }

  /// Starts `{"ph":"X"` on a new line.
  mutating func begin(_ phase: UInt8) {
    if wroteEvent { json.raw(",\n") }
    wroteEvent = true
    json.beginObject()
    json.key("ph")
    json.bytes.append(UInt8(ascii: "\""))
    json.bytes.append(phase)
    json.bytes.append(UInt8(ascii: "\""))
  }

  /// Ends the event.
  mutating func end() {
    json.endObject()
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
    json.key(name)
    json.beginObject()
  }

  /// Closes the innermost object opened by ``beginObject(_:)``.
  mutating func endObject() {
    json.endObject()
  }

  /// Closes the `traceEvents` array; what follows are the document's other members.
  mutating func endEvents() {
    json.raw("\n]")
    json.resetCommas(needed: true)
  }

  mutating func string(_ name: StaticString, _ value: String) {
    json.field(name, value)
  }

  /// A string value the exporter spells itself (no escaping needed).
  mutating func string(_ name: StaticString, literal value: StaticString) {
    json.field(name, value)
  }

  /// A string value made of two parts (`"late dealloc: " + type`) without concatenating.
  mutating func string(_ name: StaticString, prefix: StaticString, _ value: String) {
    json.key(name)
    json.string(prefix: prefix, value)
  }

  mutating func int(_ name: StaticString, _ value: Int64) {
    json.field(name, value)
  }

  mutating func bool(_ name: StaticString, _ value: Bool) {
    json.field(name, value)
  }

  /// A time in nanoseconds, written as microseconds with up to three decimals (exact).
  mutating func microseconds(_ name: StaticString, _ nanoseconds: Int64) {
    json.key(name)
    if nanoseconds < 0 { json.bytes.append(UInt8(ascii: "-")) }
    let value = nanoseconds.magnitude
    json.integer(value / 1000)
    var fraction = value % 1000
    guard fraction != 0 else { return }
    json.bytes.append(UInt8(ascii: "."))
    var digits = 3
    while fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    var divisor: UInt64 = 1
    for _ in 1..<digits { divisor *= 10 }
    while divisor > 0 {
      json.bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
      divisor /= 10
    }
  }

  /// An address as the log writes it: `"0x…"` in lower-case hex.
  mutating func address(_ name: StaticString, _ value: Address) {
    json.key(name)
    json.hex(value.rawValue)
  }
}
