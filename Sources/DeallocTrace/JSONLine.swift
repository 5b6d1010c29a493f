/// Builds JSON Lines into a byte buffer without Foundation: the writer formats thousands
/// of records per flush, and only ever needs objects of strings, integers and booleans.
struct JSONLine {
  var bytes: [UInt8] = []
  private var needsComma = false

  mutating func begin(_ kind: String) {
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
    field("ev", kind)
  }

  mutating func end() {
    bytes.append(UInt8(ascii: "}"))
    bytes.append(UInt8(ascii: "\n"))
  }

  mutating func field(_ key: String, _ value: String) {
    beginField(key)
    appendString(value)
  }

  mutating func field(_ key: String, _ value: some BinaryInteger) {
    beginField(key)
    appendDecimal(value)
  }

  mutating func field(_ key: String, _ value: Bool) {
    beginField(key)
    bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
  }

  /// A lower-case hex string, `"0x…"`, as the contract writes addresses.
  mutating func field(_ key: String, hex value: UInt) {
    beginField(key)
    bytes.append(UInt8(ascii: "\""))
    appendHex(value)
    bytes.append(UInt8(ascii: "\""))
  }

  /// Starts a field whose value the caller writes raw (an array of objects).
  mutating func beginField(_ key: String) {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
    needsComma = true
    appendString(key)
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

  mutating func appendHex(_ value: UInt) {
    bytes.append(UInt8(ascii: "0"))
    bytes.append(UInt8(ascii: "x"))
    if value == 0 {
      bytes.append(UInt8(ascii: "0"))
      return
    }
    var shift = (UInt.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4
    while shift > 0 {
      shift -= 4
      let digit = UInt8((value >> UInt(shift)) & 0xf)
      bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
    }
  }

  mutating func appendDecimal(_ value: some BinaryInteger) {
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
    }
    var magnitude = value.magnitude
    var digits:
      (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
      ) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    withUnsafeMutableBytes(of: &digits) { digits in
      repeat {
        digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
        count += 1
      } while magnitude > 0
      for index in stride(from: count - 1, through: 0, by: -1) {
        bytes.append(digits[index])
      }
    }
  }

  /// A JSON string with the escapes RFC 8259 requires; invalid UTF-8 cannot occur in a
  /// Swift `String`.
  mutating func appendString(_ value: String) {
    bytes.append(UInt8(ascii: "\""))
    for byte in value.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
      case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        bytes.append(contentsOf: Array("\\u00".utf8))
        let hexDigits = Array("0123456789abcdef".utf8)
        bytes.append(hexDigits[Int(byte >> 4)])
        bytes.append(hexDigits[Int(byte & 0xf)])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
