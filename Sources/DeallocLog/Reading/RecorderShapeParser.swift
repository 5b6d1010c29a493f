import DeallocWire

/// Parses the record kinds that make up nearly every line of a log (`enqueue`, `release`,
/// `dealloc`, `drain`, and `check`, thousands of which a test suite's log holds) when they
/// are byte for byte in the shape the recorder writes: its key order, no whitespace, no
/// escapes, no `null`.
///
/// Why: the general parser reads any key order, and per field it scans the key as a string,
/// dispatches on it and fills a struct of thirty optionals. Matching the recorder's fixed
/// `,"key":` literals instead does a fraction of that work.
///
/// The rule that keeps the two in agreement: this parser returns a record only for lines on
/// which the general parser would return the same record, and `nil` for anything else (a
/// missing or extra field, another order, whitespace, an escape, a value out of range),
/// which then goes to the general parser for its record or its error. So it changes speed,
/// never a result; `RecorderShapeParserTests` checks both paths agree line by line.
struct RecorderShapeParser {
  private let base: UnsafePointer<UInt8>
  private let end: Int
  private var index = 0

  private init(_ line: UnsafeBufferPointer<UInt8>) {
    base = line.baseAddress ?? UnsafePointer(bitPattern: 1)!
    end = line.count
  }

  /// The record on `line`, or `nil` when the line is not in the recorder's shape.
  static func parse(_ line: UnsafeBufferPointer<UInt8>, interner: inout StringInterner)
    -> LogRecord?
  {
    guard var cursor = opened(line) else { return nil }
    // Each kind returns its record straight from its branch: built into an optional and
    // mapped, the record (about a hundred bytes) was copied several times per line.
    switch cursor.hotKind() {
    case .release?:
      guard let release = cursor.finishRelease() else { return nil }
      return .release(release)
    case .enqueue?:
      guard let enqueue = cursor.finishEnqueue(&interner) else { return nil }
      return .enqueue(enqueue)
    case nil:
      break
    }
    if cursor.literal(.deallocKind) {
      guard let dealloc = cursor.dealloc(), cursor.atEnd() else { return nil }
      return .dealloc(dealloc)
    }
    if cursor.literal(.drainKind) {
      guard let drain = cursor.drain(&interner), cursor.atEnd() else { return nil }
      return .drain(drain)
    }
    if cursor.literal(.checkKind) {
      guard let check = cursor.check(&interner), cursor.atEnd() else { return nil }
      return .check(check)
    }
    return nil
  }

  /// The two kinds nearly every line of a log is, which the reader hands its visitor as they
  /// are (``LogVisitor/visitEnqueue(_:at:)``) instead of in a ``LogRecord``.
  enum HotKind {
    case enqueue
    case release
  }

  /// A cursor past the opening and the kind of an enqueue or release line in the recorder's
  /// shape, to finish with ``finishEnqueue(_:)`` or ``finishRelease()``; `nil` for any other
  /// line. ``parse(_:interner:)`` recognizes these kinds the same way.
  static func hotLine(_ line: UnsafeBufferPointer<UInt8>) -> (
    kind: HotKind, cursor: RecorderShapeParser
  )? {
    guard var cursor = opened(line), let kind = cursor.hotKind() else { return nil }
    return (kind, cursor)
  }

  /// A cursor past the record's opening, `{"ev":"`, or `nil` when the line starts otherwise.
  ///
  /// The opening compared in place: through ``literal(_:)-(ShapeKey)``, a key that ends in
  /// the line's first word goes out of line, a call per line.
  @inline(__always)
  private static func opened(_ line: UnsafeBufferPointer<UInt8>) -> RecorderShapeParser? {
    var cursor = RecorderShapeParser(line)
    guard cursor.consumeNearLineStart(.recordStart) else { return nil }
    return cursor
  }

  /// Consumes the kind when it is one of the ``HotKind``s.
  @inline(__always)
  private mutating func hotKind() -> HotKind? {
    if literal(.releaseKind) { return .release }
    if literal(.enqueueKind) { return .enqueue }
    return nil
  }

  /// The rest of an enqueue line after its opening and kind (``hotLine(_:)``): the record, or
  /// `nil` when the rest is not in the recorder's shape.
  mutating func finishEnqueue(_ interner: inout StringInterner) -> EnqueueRecord? {
    guard let enqueue = enqueue(&interner), atEnd() else { return nil }
    return enqueue
  }

  /// The rest of a release line after its opening and kind: see ``finishEnqueue(_:)``.
  mutating func finishRelease() -> ReleaseRecord? {
    guard let release = release(), atEnd() else { return nil }
    return release
  }

  /// Consumes the closing `}` when it is the line's last byte.
  @inline(__always)
  private mutating func atEnd() -> Bool {
    literal(.closingBrace) && index == end
  }

  // MARK: The kinds, in the recorder's field order (``WireSchema``).

  private mutating func enqueue(_ interner: inout StringInterner) -> EnqueueRecord? {
    guard let time = time(), literal(.id), let id = integer(),
      literal(.object), let object = hexString(),
      literal(.type), let type = name(&interner),
      literal(.queue), let queue = name(&interner)
    else { return nil }
    // The optional fields into locals and the record built once: set one by one, each packed
    // field (``EnqueueRecord``) was stored and its presence bit updated twice.
    var tid: Int64?
    var depth: Int?
    var stack: Int64?
    var retainCount: Int?
    if literal(.tid) {
      guard let value = integer() else { return nil }
      tid = value
    }
    if literal(.depth) {
      guard let value = count() else { return nil }
      depth = value
    }
    if literal(.stack) {
      guard let value = integer() else { return nil }
      stack = value
    }
    if literal(.retainCount) {
      guard let value = count() else { return nil }
      retainCount = value
    }
    var record = EnqueueRecord(
      time: time, id: UInt64(id), object: Address(object), type: type.string,
      queue: queue.string, tid: tid, depth: depth, stack: stack, retainCount: retainCount)
    record.typeID = type.id
    record.queueID = queue.id
    return record
  }

  private mutating func release() -> ReleaseRecord? {
    guard let time = time(), literal(.id), let id = integer() else { return nil }
    var tid: Int64?
    if literal(.tid) {
      guard let value = integer() else { return nil }
      tid = value
    }
    guard literal(.freed), let freed = bool() else { return nil }
    var record = ReleaseRecord(time: time, id: UInt64(id), tid: tid, freed: freed)
    if literal(.retainCount) {
      guard let retainCount = count() else { return nil }
      record.retainCount = retainCount
    }
    return record
  }

  private mutating func dealloc() -> DeallocRecord? {
    guard let time = time(), literal(.id), let id = integer() else { return nil }
    return DeallocRecord(time: time, id: UInt64(id))
  }

  private mutating func drain(_ interner: inout StringInterner) -> DrainRecord? {
    guard let time = time(), literal(.queue), let queue = name(&interner),
      literal(.drainCount), let count = count()
    else { return nil }
    var record = DrainRecord(time: time, queue: queue.string, count: count)
    record.queueID = queue.id
    if literal(.tid) {
      guard let tid = integer() else { return nil }
      record.tid = tid
    }
    if literal(.reason) {
      guard let reason = string(&interner) else { return nil }
      record.reason = reason
    }
    return record
  }

  private mutating func check(_ interner: inout StringInterner) -> CheckRecord? {
    guard let time = time(), literal(.object), let object = hexString(),
      literal(.type), let type = name(&interner),
      literal(.alive), let alive = bool(),
      literal(.label), let label = string(&interner)
    else { return nil }
    var record = CheckRecord(
      time: time, object: Address(object), type: type.string, alive: alive, label: label)
    record.typeID = type.id
    if literal(.id) {
      guard let id = integer() else { return nil }
      record.id = UInt64(id)
    }
    // The checking thread: read as the general parser reads it, and kept by neither.
    if literal(.tid) {
      guard integer() != nil else { return nil }
    }
    return record
  }

  // MARK: Values: each accepts a subset of what the general parser accepts.

  /// Consumes `key` when the line continues with exactly it, in one or two 8-byte compares:
  /// the word that ends where the key would end (read backwards into the line, so a key
  /// just before the line's end needs no bytes past it), and for a key over eight bytes
  /// also the word where it starts.
  ///
  /// `@_transparent` (inlined before optimization): with `@inline(__always)` the optimizer
  /// still called it once the kind's function grew large, and the key's words then stayed
  /// loads instead of immediates.
  @_transparent
  private mutating func literal(_ key: ShapeKey) -> Bool {
    let stop = index + key.count
    guard stop <= end else { return false }
    guard stop >= 8 else { return literalNearLineStart(key) }
    let raw = UnsafeRawPointer(base)
    let last = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: stop - 8, as: UInt64.self))
    if key.count <= 8 {
      guard last >> UInt64(64 - 8 * key.count) == key.first else { return false }
    } else {
      let first = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
      guard first == key.first, last == key.last else { return false }
    }
    index = stop
    return true
  }

  /// ``literal(_:)-(ShapeKey)`` for a key that ends in the line's first eight bytes, out of
  /// line: inlined into every other key's compare, it only made them larger.
  @inline(never)
  private mutating func literalNearLineStart(_ key: ShapeKey) -> Bool {
    consumeNearLineStart(key)
  }

  /// Consumes `key`, which ends in the line's first eight bytes (the record's opening): the
  /// word read forwards, or byte by byte on a shorter line.
  @inline(__always)
  private mutating func consumeNearLineStart(_ key: ShapeKey) -> Bool {
    if index + 8 <= end {
      let word = UInt64(
        littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
      guard word & ~(~0 << UInt64(8 * key.count)) == key.first else { return false }
    } else {
      // A line shorter than the key (`{"ev`): no byte past its end is read.
      guard index + key.count <= end else { return false }
      for offset in 0..<key.count where base[index + offset] != key.byte(offset) {
        return false
      }
    }
    index += key.count
    return true
  }

  /// A non-negative integer of 1 to 18 digits, followed by `,` or `}`: what the recorder
  /// writes. A sign, a fraction, an exponent or more digits go to the general parser.
  @inline(__always)
  private mutating func integer() -> Int64? {
    let start = index
    var value: Int64 = 0
    // The leading digits of the next eight bytes at once (SWAR): a time or an id is read in a
    // few operations instead of a loop step per digit. The loop below takes any ninth digit
    // on, and the short tail of a line.
    if index + 8 <= end {
      let digits =
        UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
        ^ 0x3030_3030_3030_3030
      // A byte is a digit when its value is 0...9 here; a carry out of a non-digit byte
      // only reaches later bytes, after the first non-digit, which is all that counts.
      let nonDigits = (digits | (digits &+ 0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0
      let count = nonDigits.trailingZeroBitCount >> 3
      guard count > 0 else { return nil }
      value = Int64(Self.decimal(digits << UInt64(8 * (8 - count))))
      index += count
      // The word held the first byte after the digits (inside the line): nothing to loop on.
      if count < 8 { return endsValue(at: index) ? value : nil }
    }
    let limit = min(end, start + 18)
    while index < limit {
      let digit = base[index] &- UInt8(ascii: "0")
      if digit > 9 { break }
      value = value &* 10 &+ Int64(digit)
      index += 1
    }
    guard index > start, index < end, endsValue(at: index) else { return nil }
    return value
  }

  /// Whether the byte at `position` (inside the line) ends a value: `,` or `}`.
  @inline(__always)
  private func endsValue(at position: Int) -> Bool {
    base[position] == UInt8(ascii: ",") || base[position] == UInt8(ascii: "}")
  }

  /// The number whose eight decimal digits (0...9, most significant first) are the bytes of
  /// `digits` in memory order: pairs, then fours, then all eight, by multiply and shift.
  @inline(__always)
  private static func decimal(_ digits: UInt64) -> UInt64 {
    let pairs = (digits &* (10 << 8 + 1)) >> 8
    let fours = ((pairs & 0x00FF_00FF_00FF_00FF) &* (100 << 16 + 1)) >> 16
    return ((fours & 0x0000_FFFF_0000_FFFF) &* (10_000 << 32 + 1)) >> 32
  }

  /// A time within ``LogLimits/times``.
  @inline(__always)
  private mutating func time() -> Int64? {
    guard let value = integer(), value <= LogLimits.maximumTime else { return nil }
    return value
  }

  /// A count within ``LogLimits/counts``.
  @inline(__always)
  private mutating func count() -> Int? {
    guard let value = integer(), value <= LogLimits.maximumCount else { return nil }
    return Int(value)
  }

  /// `"0x` and 1 to 16 hex digits `"`, from two words read in place: an address has a dozen
  /// digits, and they end where a word has fewer than eight.
  ///
  /// `nil` when fewer than sixteen bytes follow the `0x`: no record fits then (a digit and
  /// the shortest rest of a record, `","type":"","q":""}`, make twenty bytes), so that line
  /// goes to the general parser for its error.
  @inline(__always)
  private mutating func hexString() -> UInt64? {
    guard literal(.hexStart), index + 16 <= end else { return nil }
    let (count, value) = Self.leadingHexDigits(
      UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)))
    guard count > 0 else { return nil }
    guard count == 8 else {
      index += count
      return literal(.quote) ? value : nil
    }
    let (more, low) = Self.leadingHexDigits(
      UInt64(littleEndian: UnsafeRawPointer(base + index + 8).loadUnaligned(as: UInt64.self)))
    index += 8 + more
    return literal(.quote) ? value << UInt64(4 * more) | low : nil
  }

  /// How many of the eight bytes of `word` (in memory order) are hex digits before the
  /// first that is not (`0-9`, `a-f`, `A-F`), and their value.
  ///
  /// Each byte is tested against its ranges by adding constants that carry into its top bit
  /// (a byte's top bit is cleared first, and a byte that had it set is no digit), so no
  /// carry crosses into the next byte; the digits' nibbles are then gathered pairwise.
  @inline(__always)
  private static func leadingHexDigits(_ word: UInt64) -> (count: Int, value: UInt64) {
    let top: UInt64 = 0x8080_8080_8080_8080
    let low = word & ~top
    // 0x30 ≤ byte ≤ 0x39, and 0x61 ≤ byte | 0x20 ≤ 0x66 (a-f and A-F).
    let digit = (low &+ 0x5050_5050_5050_5050) & ~(low &+ 0x4646_4646_4646_4646)
    let folded = low | 0x2020_2020_2020_2020
    let letter = (folded &+ 0x1F1F_1F1F_1F1F_1F1F) & ~(folded &+ 0x1919_1919_1919_1919)
    let hex = (digit | letter) & ~word & top
    let count = (~hex & top).trailingZeroBitCount >> 3
    guard count > 0 else { return (0, 0) }
    // Each digit's value in its byte, the first digit's byte the most significant.
    var nibbles = (low & 0x0F0F_0F0F_0F0F_0F0F) &+ ((letter & top) >> 7) &* 9
    nibbles = (nibbles << UInt64(8 * (8 - count))).byteSwapped
    nibbles = (nibbles | nibbles >> 4) & 0x00FF_00FF_00FF_00FF
    nibbles = (nibbles | nibbles >> 8) & 0x0000_FFFF_0000_FFFF
    return (count, (nibbles | nibbles >> 16) & 0xFFFF_FFFF)
  }

  @inline(__always)
  private mutating func bool() -> Bool? {
    if literal(.trueValue) { return true }
    if literal(.falseValue) { return false }
    return nil
  }

  /// A string without escapes, interned as the general parser interns it.
  @inline(__always)
  private mutating func string(_ interner: inout StringInterner) -> String? {
    name(&interner)?.string
  }

  /// A string without escapes and its ``NameID``, interned as the general parser interns it.
  @inline(__always)
  private mutating func name(_ interner: inout StringInterner) -> (string: String, id: NameID)? {
    guard index < end, base[index] == UInt8(ascii: "\"") else { return nil }
    index += 1
    let start = index
    index = JSONScanner.firstQuoteOrBackslash(base, from: index, end: end)
    guard index < end, base[index] == UInt8(ascii: "\"") else { return nil }
    let count = index - start
    index += 1
    return interner.intern(base + start, count)
  }
}

/// One of the recorder's fixed keys (with its punctuation), kinds or constants, as the two
/// little-endian words ``RecorderShapeParser`` compares a line against. The keys and kinds
/// are ``WireKey``'s and ``WireKind``'s (see ``all``); the order the parser reads them in is
/// ``WireSchema``'s, which `WireSchemaTests` checks.
///
/// Why words written out: built from a string at each use, the words cost a loop per key
/// per line, more than the byte-by-byte compare they replace; as constants, a key is two
/// compares. `RecorderShapeParserTests` checks every key's words against its text.
struct ShapeKey {
  let first: UInt64
  let second: UInt64
  let count: Int

  @inline(__always)
  init(_ first: UInt64, _ second: UInt64, count: Int) {
    self.first = first
    self.second = second
    self.count = count
  }

  /// The key's last eight bytes, for a key of more than eight (the words of `first` and
  /// `second` shifted together; a constant once inlined).
  @inline(__always)
  var last: UInt64 { first >> UInt64(8 * (count - 8)) | second << UInt64(8 * (16 - count)) }

  @inline(__always)
  func byte(_ offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: (offset < 8 ? first : second) >> UInt64(8 * (offset % 8)))
  }

  /// `{"ev":"`
  static var recordStart: ShapeKey { ShapeKey(0x22_3A22_7665_227B, 0, count: 7) }
  /// `release","t":`
  static var releaseKind: ShapeKey { ShapeKey(0x2265_7361_656C_6572, 0x3A_2274_222C, count: 13) }
  /// `enqueue","t":`
  static var enqueueKind: ShapeKey { ShapeKey(0x2265_7565_7571_6E65, 0x3A_2274_222C, count: 13) }
  /// `dealloc","t":`
  static var deallocKind: ShapeKey { ShapeKey(0x2263_6F6C_6C61_6564, 0x3A_2274_222C, count: 13) }
  /// `drain","t":`
  static var drainKind: ShapeKey { ShapeKey(0x222C_226E_6961_7264, 0x3A_2274, count: 11) }
  /// `check","t":`
  static var checkKind: ShapeKey { ShapeKey(0x222C_226B_6365_6863, 0x3A_2274, count: 11) }
  /// `,"id":`
  static var id: ShapeKey { ShapeKey(0x3A22_6469_222C, 0, count: 6) }
  /// `,"obj":`
  static var object: ShapeKey { ShapeKey(0x3A_226A_626F_222C, 0, count: 7) }
  /// `,"type":`
  static var type: ShapeKey { ShapeKey(0x3A22_6570_7974_222C, 0, count: 8) }
  /// `,"q":`
  static var queue: ShapeKey { ShapeKey(0x3A_2271_222C, 0, count: 5) }
  /// `,"tid":`
  static var tid: ShapeKey { ShapeKey(0x3A_2264_6974_222C, 0, count: 7) }
  /// `,"depth":`
  static var depth: ShapeKey { ShapeKey(0x2268_7470_6564_222C, 0x3A, count: 9) }
  /// `,"stack":`
  static var stack: ShapeKey { ShapeKey(0x226B_6361_7473_222C, 0x3A, count: 9) }
  /// `,"rc":`
  static var retainCount: ShapeKey { ShapeKey(0x3A22_6372_222C, 0, count: 6) }
  /// `,"freed":`
  static var freed: ShapeKey { ShapeKey(0x2264_6565_7266_222C, 0x3A, count: 9) }
  /// `,"n":`
  static var drainCount: ShapeKey { ShapeKey(0x3A_226E_222C, 0, count: 5) }
  /// `,"why":`
  static var reason: ShapeKey { ShapeKey(0x3A_2279_6877_222C, 0, count: 7) }
  /// `,"alive":`
  static var alive: ShapeKey { ShapeKey(0x2265_7669_6C61_222C, 0x3A, count: 9) }
  /// `,"label":`
  static var label: ShapeKey { ShapeKey(0x226C_6562_616C_222C, 0x3A, count: 9) }
  /// `}`
  static var closingBrace: ShapeKey { ShapeKey(0x7D, 0, count: 1) }
  /// `"`
  static var quote: ShapeKey { ShapeKey(0x22, 0, count: 1) }
  /// `"0x`
  static var hexStart: ShapeKey { ShapeKey(0x78_3022, 0, count: 3) }
  /// `true`
  static var trueValue: ShapeKey { ShapeKey(0x6575_7274, 0, count: 4) }
  /// `false`
  static var falseValue: ShapeKey { ShapeKey(0x65_736C_6166, 0, count: 5) }

  /// Every key with its text, for the test that checks the words: the recorder's keys and
  /// kinds spelled from ``WireKey`` and ``WireKind``, the one place the writer takes them from.
  static var all: [(key: ShapeKey, text: String)] {
    func key(_ name: StaticString) -> String { ",\"\(name)\":" }
    func kind(_ name: StaticString) -> String { "\(name)\",\"\(WireKey.time)\":" }
    return [
      (.recordStart, "{\"\(WireKey.kind)\":\""),
      (.releaseKind, kind(WireKind.release)),
      (.enqueueKind, kind(WireKind.enqueue)),
      (.deallocKind, kind(WireKind.dealloc)),
      (.drainKind, kind(WireKind.drain)),
      (.checkKind, kind(WireKind.check)),
      (.id, key(WireKey.id)),
      (.object, key(WireKey.object)),
      (.type, key(WireKey.type)),
      (.queue, key(WireKey.queue)),
      (.tid, key(WireKey.threadID)),
      (.depth, key(WireKey.depth)),
      (.stack, key(WireKey.stack)),
      (.retainCount, key(WireKey.retainCount)),
      (.freed, key(WireKey.freed)),
      (.drainCount, key(WireKey.drainCount)),
      (.reason, key(WireKey.reason)),
      (.alive, key(WireKey.alive)),
      (.label, key(WireKey.label)),
      (.closingBrace, "}"),
      (.quote, "\""),
      (.hexStart, "\"0x"),
      (.trueValue, "true"),
      (.falseValue, "false"),
    ]
  }
}
