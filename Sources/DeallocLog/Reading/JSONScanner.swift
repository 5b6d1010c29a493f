/// A forward-only scanner over the bytes of one JSON line.
///
/// Why hand-written: the reader's throughput is dominated by parsing, and a generic JSON
/// decoder allocates a dictionary per line. This scanner reads only the shapes the log
/// contract uses (flat objects, plus arrays of flat objects for stack frames), allocates
/// nothing for numbers, hex strings and keys, and skips anything else without recursion.
/// It is robust to arbitrary bytes: every read is bounds-checked and failures are values.
struct JSONScanner {
  let base: UnsafePointer<UInt8>
  let end: Int
  var index: Int = 0

  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    // An empty buffer may have a nil base; any non-nil pointer does, since every read is
    // checked against `end` (0) first and none is ever made.
    self.base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!
    self.end = bytes.count
  }

  /// Why a line is not a record, in words for a warning.
  struct Failure: Error {
    var message: String
    /// The failure is the session record's `v`: the whole input is unusable, not one line.
    var isVersion = false
    init(_ message: String, isVersion: Bool = false) {
      self.message = message
      self.isVersion = isVersion
    }
  }

  var isAtEnd: Bool { index >= end }

  @inline(__always)
  func peek() -> UInt8? {
    index < end ? base[index] : nil
  }

  @inline(__always)
  mutating func skipWhitespace() {
    while index < end {
      let byte = base[index]
      if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
        index += 1
      } else {
        return
      }
    }
  }

  @inline(__always)
  mutating func consume(_ byte: UInt8) -> Bool {
    skipWhitespace()
    if index < end && base[index] == byte {
      index += 1
      return true
    }
    return false
  }

  mutating func expect(_ byte: UInt8, _ what: StaticString) throws(Failure) {
    if !consume(byte) { throw Failure("expected \(what) at byte \(index + 1)") }
  }

  /// A string's raw bytes without the quotes, and whether it contains escapes.
  /// The range stays valid as long as the line's buffer.
  mutating func readRawString() throws(Failure) -> (start: Int, count: Int, escaped: Bool) {
    skipWhitespace()
    guard index < end, base[index] == UInt8(ascii: "\"") else {
      throw Failure("expected a string at byte \(index + 1)")
    }
    index += 1
    let start = index
    var escaped = false
    while true {
      index = Self.firstQuoteOrBackslash(base, from: index, end: end)
      guard index < end else { throw Failure("unterminated string") }
      if base[index] == UInt8(ascii: "\"") {
        let count = index - start
        index += 1
        return (start, count, escaped)
      }
      escaped = true
      index += 2
    }
  }

  /// The index of the first quote or backslash in `base[start..<end]`, or `end`: eight bytes
  /// at a time (most strings have neither inside), then byte by byte.
  @inline(__always)
  static func firstQuoteOrBackslash(_ base: UnsafePointer<UInt8>, from start: Int, end: Int)
    -> Int
  {
    var index = start
    while index + 8 <= end {
      let found = quoteOrBackslash(
        UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)))
      if found != 0 { return index + found.trailingZeroBitCount >> 3 }
      index += 8
    }
    while index < end {
      if base[index] == UInt8(ascii: "\"") || base[index] == UInt8(ascii: "\\") {
        return index
      }
      index += 1
    }
    return max(index, end)
  }

  /// A mask with the high bit set in each byte of `word` that is a quote or a backslash, exact
  /// up to the first such byte (SWAR zero-byte detection: a borrow can mark bytes above the first
  /// match, never below, and only the lowest marked byte is used).
  @inline(__always)
  static func quoteOrBackslash(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    return ((quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes) & highs
  }

  /// Decodes a string with escapes; invalid UTF-8 becomes U+FFFD, never a failure.
  func decodeString(start: Int, count: Int, escaped: Bool) throws(Failure) -> String {
    let bytes = UnsafeBufferPointer(start: base + start, count: count)
    if !escaped { return String(decoding: bytes, as: UTF8.self) }
    return try Self.unescaping(bytes)
  }

  /// The text of a string's bytes with their escapes resolved. Rare in logs (types and
  /// labels seldom need escapes), so it favours plainness over speed.
  private static func unescaping(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> String {
    var text = UnescapedText(capacity: bytes.count)
    var i = 0
    while i < bytes.count {
      let byte = bytes[i]
      if byte != UInt8(ascii: "\\") {
        text.append(byte)
        i += 1
        continue
      }
      guard i + 1 < bytes.count else { throw Failure("bad escape in string") }
      let code = bytes[i + 1]
      i += 2
      if code == UInt8(ascii: "u") {
        guard i + 4 <= bytes.count, let unit = hex4(bytes, i) else {
          throw Failure("bad \\u escape in string")
        }
        i += 4
        text.append(utf16: unit)
        continue
      }
      guard let unescaped = unescaped(code) else { throw Failure("bad escape in string") }
      text.append(unescaped)
    }
    return text.finished()
  }

  /// The byte a one-character escape (`\n`, `\"`, …) stands for; `nil` for none.
  private static func unescaped(_ code: UInt8) -> UInt8? {
    switch code {
    case UInt8(ascii: "\""): return UInt8(ascii: "\"")
    case UInt8(ascii: "\\"): return UInt8(ascii: "\\")
    case UInt8(ascii: "/"): return UInt8(ascii: "/")
    case UInt8(ascii: "b"): return 0x08
    case UInt8(ascii: "f"): return 0x0C
    case UInt8(ascii: "n"): return 0x0A
    case UInt8(ascii: "r"): return 0x0D
    case UInt8(ascii: "t"): return 0x09
    default: return nil
    }
  }

  /// UTF-8 being built from an escaped string. A `\u` high surrogate waits here for its low
  /// half; anything else after it, or the string's end, makes it U+FFFD.
  private struct UnescapedText {
    private var utf8: [UInt8] = []
    private var pendingHighSurrogate: UInt32?

    init(capacity: Int) { utf8.reserveCapacity(capacity) }

    /// Appends a byte as it is (a raw byte, or one an escape stands for).
    mutating func append(_ byte: UInt8) {
      dropPendingHighSurrogate()
      utf8.append(byte)
    }

    /// Appends the code unit of a `\u` escape, pairing surrogates; a lone one is U+FFFD.
    mutating func append(utf16 unit: UInt32) {
      if (0xD800...0xDBFF).contains(unit) {
        dropPendingHighSurrogate()
        pendingHighSurrogate = unit
        return
      }
      if (0xDC00...0xDFFF).contains(unit), let high = pendingHighSurrogate {
        pendingHighSurrogate = nil
        appendScalar(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
        return
      }
      dropPendingHighSurrogate()
      appendScalar((0xD800...0xDFFF).contains(unit) ? 0xFFFD : unit)
    }

    mutating func finished() -> String {
      dropPendingHighSurrogate()
      return String(decoding: utf8, as: UTF8.self)
    }

    /// A high surrogate that no low one followed is U+FFFD.
    private mutating func dropPendingHighSurrogate() {
      guard pendingHighSurrogate != nil else { return }
      appendScalar(0xFFFD)
      pendingHighSurrogate = nil
    }

    private mutating func appendScalar(_ value: UInt32) {
      let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
      UTF8.encode(scalar) { utf8.append($0) }
    }
  }

  private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32? {
    var value: UInt32 = 0
    for k in 0..<4 {
      guard let digit = hexDigit(bytes[at + k]) else { return nil }
      value = value << 4 | UInt32(digit)
    }
    return value
  }

  @inline(__always)
  static func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
    default: return nil
    }
  }

  /// Reads a string value.
  mutating func readString() throws(Failure) -> String {
    let raw = try readRawString()
    return try decodeString(start: raw.start, count: raw.count, escaped: raw.escaped)
  }

  /// Reads `"0x…"` (at most 16 hex digits) as an integer; escaped digits (`"0x\u0031f"`)
  /// are decoded first, as JSON allows.
  mutating func readHexString() throws(Failure) -> UInt64 {
    let raw = try readRawString()
    let value: UInt64?
    if raw.escaped {
      let text = try decodeString(start: raw.start, count: raw.count, escaped: true)
      value = Array(text.utf8).withUnsafeBufferPointer { Self.hexValue($0) }
    } else {
      value = Self.hexValue(UnsafeBufferPointer(start: base + raw.start, count: raw.count))
    }
    guard let value else { throw Failure("expected a hex string like \"0x1f\"") }
    return value
  }

  /// The value of `0x` and 1 to 16 hex digits, or `nil`.
  private static func hexValue(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
    guard bytes.count >= 3, bytes.count <= 18, bytes[0] == UInt8(ascii: "0"),
      bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "X")
    else { return nil }
    var value: UInt64 = 0
    for byte in bytes[2...] {
      guard let digit = hexDigit(byte) else { return nil }
      value = value << 4 | UInt64(digit)
    }
    return value
  }

  /// Reads an integer. A fraction or exponent is a failure: the contract's integers are
  /// integers, and rounding one silently would hide a writer bug.
  mutating func readInteger() throws(Failure) -> Int64 {
    skipWhitespace()
    var negative = false
    if index < end && base[index] == UInt8(ascii: "-") {
      negative = true
      index += 1
    }
    let start = index
    // Up to 18 digits cannot overflow: accumulate without checks, then look at the rest.
    var value: UInt64 = 0
    let fastEnd = min(end, start + 18)
    while index < fastEnd {
      let digit = base[index] &- UInt8(ascii: "0")
      if digit > 9 { break }
      value = value &* 10 &+ UInt64(digit)
      index += 1
    }
    while index < end {
      let digit = base[index] &- UInt8(ascii: "0")
      if digit > 9 { break }
      let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
      if overflow1 || overflow2 || sum > UInt64(Int64.max) {
        throw Failure("integer out of range")
      }
      value = sum
      index += 1
    }
    if index == start { throw Failure("expected an integer at byte \(index + 1)") }
    if index < end {
      let next = base[index]
      if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
        throw Failure("expected an integer, found a fraction")
      }
    }
    return negative ? -Int64(value) : Int64(value)
  }

  /// Reads any JSON number as a `Double` (for `delay_ms`).
  mutating func readNumber() throws(Failure) -> Double {
    skipWhitespace()
    let start = index
    while index < end {
      switch base[index] {
      case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
        UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
        index += 1
        continue
      default: break
      }
      break
    }
    let text = String(
      decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw Failure("expected a number at byte \(start + 1)")
    }
    return value
  }

  /// Reads `true` or `false`.
  mutating func readBool() throws(Failure) -> Bool {
    skipWhitespace()
    if matchLiteral("true") { return true }
    if matchLiteral("false") { return false }
    throw Failure("expected true or false at byte \(index + 1)")
  }

  /// Consumes `null` when it is next.
  mutating func consumeNull() -> Bool {
    skipWhitespace()
    return matchLiteral("null")
  }

  private mutating func matchLiteral(_ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard index + count <= end else { return false }
    let bytes = literal.utf8Start
    for k in 0..<count where base[index + k] != bytes[k] { return false }
    index += count
    return true
  }

  /// Skips one value of any shape, nesting included, without recursion.
  mutating func skipValue() throws(Failure) {
    skipWhitespace()
    var depth = 0
    repeat {
      guard index < end else { throw Failure("unexpected end of line") }
      let byte = base[index]
      switch byte {
      case UInt8(ascii: "\""):
        _ = try readRawString()
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        depth += 1
        index += 1
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        guard depth > 0 else { throw Failure("unexpected '\(Character(Unicode.Scalar(byte)))'") }
        depth -= 1
        index += 1
      case UInt8(ascii: ","), UInt8(ascii: ":"):
        guard depth > 0 else { throw Failure("unexpected separator") }
        index += 1
      case 0x20, 0x09, 0x0A, 0x0D:
        index += 1
      default:
        // A number or literal: consume its characters.
        let start = index
        while index < end {
          let c = base[index]
          if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]")
            || c == 0x20 || c == 0x09 || c == UInt8(ascii: ":")
          {
            break
          }
          index += 1
        }
        if index == start { throw Failure("unexpected byte") }
      }
      if depth > 0 { skipWhitespace() }
    } while depth > 0
  }

  /// Reads an object key and the `:` after it; returns its bytes packed into an integer
  /// (keys longer than 8 bytes pack to 0 but for the few ``longKey(_:_:)`` names).
  ///
  /// A key with escapes (`"\u0073tack"`) is decoded first and then coded as its plain form:
  /// JSON allows the escapes, and a writer other than the recorder may use them.
  mutating func readKey() throws(Failure) -> UInt64 {
    let raw = try readRawString()
    try expect(UInt8(ascii: ":"), "':'")
    if raw.count == 0 { return 0 }
    if raw.escaped { return try escapedCode(start: raw.start, count: raw.count, long: true) }
    if raw.count > 8 { return Self.longKey(base + raw.start, raw.count) }
    return packKey(raw.start, raw.count)
  }

  /// The code of an escaped string (a key, or a record's kind): its decoded bytes packed as
  /// ``readKey()`` packs a plain one, or as ``longKey(_:_:)`` codes it when `long`. 0 when
  /// the text holds a control character: no key or kind of the contract has one, and a
  /// decoded `\u0000` would otherwise pack like the key without it. Out of line: the
  /// recorder writes no escapes in keys or kinds.
  @inline(never)
  func escapedCode(start: Int, count: Int, long: Bool) throws(Failure) -> UInt64 {
    let text = try decodeString(start: start, count: count, escaped: true)
    let utf8 = Array(text.utf8)
    guard !utf8.isEmpty, !utf8.contains(where: { $0 < 0x20 }) else { return 0 }
    return utf8.withUnsafeBufferPointer { bytes -> UInt64 in
      let pointer = bytes.baseAddress!
      if bytes.count <= 8 { return Self.pack(pointer, bytes.count) }
      return long ? Self.longKey(pointer, bytes.count) : 0
    }
  }

  /// The code of a key longer than 8 bytes, which cannot be packed: ``longKeyUnwritten`` for
  /// `unwritten`, ``longKeyHolderScans`` and ``longKeyHolderScansSkipped`` for the `end`
  /// record's holder counters, ``longKeyAllocStack`` for a `holders` record's `allocStack`,
  /// 0 (skipped) for any other. No packed key can be 1 to 4 (a
  /// key byte below 0x20 must be escaped in JSON, and a decoded one codes as 0).
  static func longKey(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
    func matches(_ name: StaticString) -> Bool {
      guard count == name.utf8CodeUnitCount else { return false }
      for k in 0..<count where pointer[k] != name.utf8Start[k] { return false }
      return true
    }
    if matches("unwritten") { return longKeyUnwritten }
    if matches("holder_scans") { return longKeyHolderScans }
    if matches("holder_scans_skipped") { return longKeyHolderScansSkipped }
    if matches("allocStack") { return longKeyAllocStack }
    return 0
  }

  static let longKeyUnwritten: UInt64 = 1
  static let longKeyHolderScans: UInt64 = 2
  static let longKeyHolderScansSkipped: UInt64 = 3
  static let longKeyAllocStack: UInt64 = 4

  /// Packs a key at `start` of this line, loading 8 bytes at once when the line has them.
  @inline(__always)
  func packKey(_ start: Int, _ count: Int) -> UInt64 {
    if start + 8 <= end {
      let word = UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self)
      let little = UInt64(littleEndian: word)
      return count == 8 ? little : little & ((1 << (8 * UInt64(count))) - 1)
    }
    return Self.pack(base + start, count)
  }

  @inline(__always)
  static func pack(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
    var value: UInt64 = 0
    for k in 0..<count { value |= UInt64(pointer[k]) << (8 * UInt64(k)) }
    return value
  }

  static func pack(_ text: StaticString) -> UInt64 {
    pack(text.utf8Start, text.utf8CodeUnitCount)
  }
}
