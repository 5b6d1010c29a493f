import DeallocWire
import TextEscaping

/// A log line is one object of the shared compact writer (`CompactJSON`), begun with its
/// kind and ended with a newline; what only the recorder writes is in the extension below.
package typealias JSONLine = CompactJSON

extension JSONLine {
  mutating func begin(_ kind: StaticString) {
    beginObject()
    field(WireKey.kind, kind)
  }

  mutating func end() {
    endObject()
    bytes.append(UInt8(ascii: "\n"))
  }

  /// An address kept hidden (`HiddenAddress`), written as `"0x…"` nibble by nibble, so that
  /// the real address never sits whole in a register or a stack slot of the writer, where
  /// a holder scan from another thread could find it.
  mutating func field(_ key: StaticString, hiddenHex hidden: UInt) {
    self.key(key)
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
  /// object, as if written field by field. The text is the census's, well-formed JSON; an
  /// empty or malformed object adds nothing.
  mutating func members(ofObject object: String) {
    var utf8 = Substring(object).utf8
    while utf8.first == UInt8(ascii: " ") { utf8 = utf8.dropFirst() }
    while utf8.last == UInt8(ascii: " ") { utf8 = utf8.dropLast() }
    guard utf8.first == UInt8(ascii: "{"), utf8.last == UInt8(ascii: "}") else { return }
    let inner = utf8.dropFirst().dropLast()
    guard !inner.isEmpty else { return }
    // The members' own commas are in the text: only the one before them is the writer's.
    element()
    bytes.append(contentsOf: inner)
  }
}
