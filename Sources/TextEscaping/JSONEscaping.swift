extension Escaping {
  /// Appends `text` as a JSON string literal, quotes included, as UTF-8 bytes.
  ///
  /// Escapes `"`, `\`, every control character (`\n`, `\r`, `\t`, else `\u001b`; C1 and DEL
  /// too) and the layout characters (`\u2028`, `\u2029`, which JavaScript string literals
  /// refuse, and the bidirectional overrides, so a JSON report shown raw in a terminal
  /// reorders nothing). Other text stays as it is, so non-ASCII names stay readable. Works
  /// on bytes because the trace writer streams bytes (a scalar-by-scalar loop cost it a
  /// third of its time); the string forms wrap it.
  public static func json(_ text: String, into out: inout [UInt8]) {
    out.append(0x22)
    jsonContents(text, into: &out)
    out.append(0x22)
  }

  /// Appends the inside of ``json(_:into:)-(_,[UInt8])``'s literal, without the quotes, for a
  /// writer that builds one string value from several parts.
  public static func jsonContents(_ text: String, into out: inout [UInt8]) {
    var text = text
    text.withUTF8 { utf8 in
      // Names and labels rarely need escaping: copy them in bulk when they don't.
      if !utf8.contains(where: Self.mayNeedJSONEscape) {
        out.append(contentsOf: utf8)
        return
      }
      let count = utf8.count
      var index = 0
      while index < count {
        let byte = utf8[index]
        switch byte {
        case 0x22: out += [0x5C, 0x22]
        case 0x5C: out += [0x5C, 0x5C]
        case 0x0A: out += [0x5C, 0x6E]
        case 0x0D: out += [0x5C, 0x72]
        case 0x09: out += [0x5C, 0x74]
        case 0..<0x20, 0x7F: unicodeEscape(UInt32(byte), into: &out)
        case 0xC2 where index + 1 < count && (0x80...0x9F).contains(utf8[index + 1]):
          // U+0080–U+009F, the C1 controls.
          unicodeEscape(UInt32(utf8[index + 1]), into: &out)
          index += 1
        case 0xE2
        where index + 2 < count && utf8[index + 1] == 0x80
          && (0xA8...0xAE).contains(utf8[index + 2]):
          // U+2028, U+2029 and U+202A–U+202E.
          unicodeEscape(0x2000 + UInt32(utf8[index + 2] - 0x80), into: &out)
          index += 2
        case 0xE2
        where index + 2 < count && utf8[index + 1] == 0x81
          && (0xA6...0xA9).contains(utf8[index + 2]):
          // U+2066–U+2069.
          unicodeEscape(0x2040 + UInt32(utf8[index + 2] - 0x80), into: &out)
          index += 2
        default:
          out.append(byte)
        }
        index += 1
      }
    }
  }

  /// Appends `text` as a JSON string literal, quotes included.
  public static func json(_ text: String, into out: inout String) {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count + 2)
    json(text, into: &bytes)
    out += String(decoding: bytes, as: UTF8.self)
  }

  /// `text` as a JSON string literal.
  public static func json(_ text: String) -> String {
    var out = ""
    json(text, into: &out)
    return out
  }

  /// Whether `byte` can start something ``jsonContents(_:into:)`` escapes: a control, `"`,
  /// `\`, DEL, or the lead byte of a C1 control or of a layout character.
  @inline(__always)
  private static func mayNeedJSONEscape(_ byte: UInt8) -> Bool {
    byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xC2 || byte == 0xE2
  }

  private static func unicodeEscape(_ value: UInt32, into out: inout [UInt8]) {
    out += [0x5C, 0x75]
    for shift in stride(from: 12, through: 0, by: -4) {
      out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)])
    }
  }

  private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
