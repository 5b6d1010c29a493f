extension Escaping {
  /// Appends `text` as a JSON string literal, quotes included, as UTF-8 bytes.
  ///
  /// Escapes `"`, `\`, every control character (`\n`, `\r`, `\t`, else `\u001b`; C1 and DEL
  /// too) and the layout characters (`\u2028`, `\u2029`, which JavaScript string literals
  /// refuse, and the bidirectional overrides, so a JSON report shown raw in a terminal
  /// reorders nothing). Other text stays as it is, so non-ASCII names stay readable. Works
  /// on bytes because the trace writer streams bytes (a scalar-by-scalar loop cost it a
  /// third of its time); the string forms wrap it.
  @inlinable
  public static func json(_ text: String, into out: inout some ByteSink) {
    out.append(0x22)
    jsonContents(text, into: &out)
    out.append(0x22)
  }

  /// Appends the inside of ``json(_:into:)-(_,[UInt8])``'s literal, without the quotes, for a
  /// writer that builds one string value from several parts.
  @inlinable
  public static func jsonContents(_ text: String, into out: inout some ByteSink) {
    // A native string lends its bytes without a copy; only a bridged one needs `withUTF8`.
    if text.utf8.withContiguousStorageIfAvailable({ jsonContents($0, into: &out) }) == nil {
      var text = text
      text.withUTF8 { jsonContents($0, into: &out) }
    }
  }

  /// ``jsonContents(_:into:)-(String,_)`` of UTF-8 bytes, for a writer whose text is not a
  /// `String` (a literal key, a recorded name).
  ///
  /// Names and labels rarely need escaping: it scans for the few bytes that can need it,
  /// eight at a time, and appends each run between them at once.
  @inlinable
  public static func jsonContents(
    _ utf8: UnsafeBufferPointer<UInt8>, into out: inout some ByteSink
  ) {
    let count = utf8.count
    var runStart = 0
    var index = 0
    while true {
      index = firstMayNeedJSONEscape(utf8, from: index)
      guard index < count else { break }
      let (escape, length) = jsonEscape(utf8, at: index)
      guard length > 0 else {
        index += 1
        continue
      }
      if runStart < index {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
      }
      if escape < 0x80 {
        out.append(0x5C)
        out.append(UInt8(escape))
      } else {
        unicodeEscape(escape, into: &out)
      }
      index += length
      runStart = index
    }
    if runStart == 0 {
      out.append(contentsOf: utf8)
    } else if runStart < count {
      out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
    }
  }

  /// The escape of the character at `index` and how many bytes it spans, or a length of 0
  /// for a byte that only looked like it might need one (the lead byte of other text).
  /// An escape below 0x80 is the letter after the backslash; above, a `\u` code point.
  @inlinable @inline(__always)
  static func jsonEscape(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> (
    UInt32, Int
  ) {
    let count = utf8.count
    let byte = utf8[index]
    switch byte {
    case 0x22: return (0x22, 1)
    case 0x5C: return (0x5C, 1)
    case 0x0A: return (UInt32(UInt8(ascii: "n")), 1)
    case 0x0D: return (UInt32(UInt8(ascii: "r")), 1)
    case 0x09: return (UInt32(UInt8(ascii: "t")), 1)
    // Code points below 0x80 here would read as a letter: `unicodeEscape` takes them apart.
    case 0..<0x20, 0x7F: return (0x1_0000 | UInt32(byte), 1)
    case 0xC2 where index + 1 < count && (0x80...0x9F).contains(utf8[index + 1]):
      // U+0080–U+009F, the C1 controls.
      return (UInt32(utf8[index + 1]), 2)
    case 0xE2
    where index + 2 < count && utf8[index + 1] == 0x80
      && (0xA8...0xAE).contains(utf8[index + 2]):
      // U+2028, U+2029 and U+202A–U+202E.
      return (0x2000 + UInt32(utf8[index + 2] - 0x80), 3)
    case 0xE2
    where index + 2 < count && utf8[index + 1] == 0x81
      && (0xA6...0xA9).contains(utf8[index + 2]):
      // U+2066–U+2069.
      return (0x2040 + UInt32(utf8[index + 2] - 0x80), 3)
    default:
      return (0, 0)
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

  /// Where the first byte from `start` on that ``mayNeedJSONEscape(_:)`` is, or the count.
  @inlinable @inline(__always)
  static func firstMayNeedJSONEscape(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int)
    -> Int
  {
    let count = utf8.count
    var index = start
    if let base = utf8.baseAddress {
      let raw = UnsafeRawPointer(base)
      while index + 8 <= count {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
        let found = mayNeedJSONEscape(word)
        if found != 0 { return index + found.trailingZeroBitCount / 8 }
        index += 8
      }
    }
    while index < count, !mayNeedJSONEscape(utf8[index]) { index += 1 }
    return index
  }

  /// Whether `byte` can start something ``jsonContents(_:into:)`` escapes: a control, `"`,
  /// `\`, DEL, or the lead byte of a C1 control or of a layout character.
  @inlinable @inline(__always)
  static func mayNeedJSONEscape(_ byte: UInt8) -> Bool {
    byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F || byte == 0xC2 || byte == 0xE2
  }

  /// ``mayNeedJSONEscape(_:)`` of the eight bytes of `word` (the first in the low byte): the
  /// high bit of each byte of the result is set for a byte that may, and the lowest set bit
  /// is exact (the bytes above it may be set falsely, by a borrow).
  @inlinable @inline(__always)
  static func mayNeedJSONEscape(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    /// High bits of the bytes of `x` that are zero (the lowest exactly).
    func zeroBytes(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
    let below20 = (word &- ones &* 0x20) & ~word & highs
    return below20 | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
      | zeroBytes(word ^ (ones &* 0x7F)) | zeroBytes(word ^ (ones &* 0xC2))
      | zeroBytes(word ^ (ones &* 0xE2))
  }

  @inlinable
  static func unicodeEscape(_ value: UInt32, into out: inout some ByteSink) {
    let value = value & 0xFFFF
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6) { digits in
      digits[0] = 0x5C
      digits[1] = UInt8(ascii: "u")
      for place in 0..<4 {
        let nibble = UInt8(truncatingIfNeeded: value >> UInt32(12 - 4 * place)) & 0xF
        digits[2 + place] =
          nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
      }
      out.append(contentsOf: UnsafeBufferPointer(digits))
    }
  }
}
