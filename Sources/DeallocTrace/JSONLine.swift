import DeallocWire
import TextEscaping

/// Builds JSON Lines into a byte buffer without Foundation: the writer formats thousands
/// of records per flush, and only ever needs objects of strings, integers and booleans.
package struct JSONLine {
  package var bytes: [UInt8] = []
  private var needsComma = false

  package init() {}

  mutating func begin(_ kind: StaticString) {
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
    field(WireKey.kind, kind)
  }

  mutating func end() {
    bytes.append(UInt8(ascii: "}"))
    bytes.append(UInt8(ascii: "\n"))
  }

  mutating func field(_ key: StaticString, _ value: String) {
    beginField(key)
    appendString(value)
  }

  mutating func field(_ key: StaticString, _ value: StaticString) {
    beginField(key)
    bytes.append(UInt8(ascii: "\""))
    bytes.append(
      contentsOf: UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
    bytes.append(UInt8(ascii: "\""))
  }

  mutating func field(_ key: StaticString, _ value: some BinaryInteger) {
    beginField(key)
    Escaping.appendDecimal(value, to: &bytes)
  }

  mutating func field(_ key: StaticString, _ value: Bool) {
    beginField(key)
    bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
  }

  /// A lower-case hex string, `"0x…"`, as the contract writes addresses.
  mutating func field(_ key: StaticString, hex value: UInt) {
    beginField(key)
    bytes.append(UInt8(ascii: "\""))
    Escaping.appendHex(UInt64(value), to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// An address kept hidden (`HiddenAddress`), written as `"0x…"` nibble by nibble, so that
  /// the real address never sits whole in a register or a stack slot of the writer, where
  /// a holder scan from another thread could find it.
  mutating func field(_ key: StaticString, hiddenHex hidden: UInt) {
    beginField(key)
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: "0"))
    bytes.append(UInt8(ascii: "x"))
    var shift = UInt.bitWidth - 4
    var started = false
    while shift >= 0 {
      let digit =
        UInt8(truncatingIfNeeded: (hidden >> UInt(shift)) & 0xf)
        ^ UInt8(truncatingIfNeeded: (HiddenAddress.mask >> UInt(shift)) & 0xf)
      if digit != 0 || started || shift == 0 {
        started = true
        bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
      }
      shift -= 4
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// Appends the members of the JSON object `object` (`{"a":1,"b":2}`) to the line's
  /// object, as if written field by field. The text is the holder scanner's, well-formed
  /// JSON; an empty or malformed object adds nothing.
  mutating func members(ofObject object: String) {
    var utf8 = Substring(object).utf8
    while utf8.first == UInt8(ascii: " ") { utf8 = utf8.dropFirst() }
    while utf8.last == UInt8(ascii: " ") { utf8 = utf8.dropLast() }
    guard utf8.first == UInt8(ascii: "{"), utf8.last == UInt8(ascii: "}") else { return }
    let inner = utf8.dropFirst().dropLast()
    guard !inner.isEmpty else { return }
    if needsComma { bytes.append(UInt8(ascii: ",")) }
    needsComma = true
    bytes.append(contentsOf: inner)
  }

  /// Starts a field whose value the caller writes raw (an array of objects). Keys are the
  /// recorder's own ASCII names, so they are copied in bulk, unescaped.
  mutating func beginField(_ key: StaticString) {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
    needsComma = true
    bytes.append(UInt8(ascii: "\""))
    bytes.append(
      contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  /// Writes a nested object's fields; `body` uses the same field calls.
  mutating func object(_ body: (inout JSONLine) -> Void) {
    bytes.append(UInt8(ascii: "{"))
    let outer = needsComma
    needsComma = false
    body(&self)
    bytes.append(UInt8(ascii: "}"))
    needsComma = outer
  }

  mutating func raw(_ ascii: Character) {
    bytes.append(UInt8(ascii: ascii.unicodeScalars.first!))
  }

  /// A JSON string, escaped by the same policy as every JSON the reader side writes
  /// (the bytes form of `Escaping.json(_:into:)`), so a type name reads the same in the log
  /// and in a report.
  mutating func appendString(_ value: String) {
    Escaping.json(value, into: &bytes)
  }
}
