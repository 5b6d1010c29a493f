/// Parses the four record kinds that make up nearly every line of a log (`enqueue`,
/// `release`, `dealloc`, `drain`) when they are byte for byte in the shape the recorder
/// writes: its key order, no whitespace, no escapes, no `null`.
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
    var cursor = RecorderShapeParser(line)
    guard cursor.literal("{\"ev\":\"") else { return nil }
    // Each kind returns its record straight from its branch: built into an optional and
    // mapped, the record (about a hundred bytes) was copied several times per line.
    if cursor.literal("release\",\"t\":") {
      guard let release = cursor.release(), cursor.atEnd() else { return nil }
      return .release(release)
    }
    if cursor.literal("enqueue\",\"t\":") {
      guard let enqueue = cursor.enqueue(&interner), cursor.atEnd() else { return nil }
      return .enqueue(enqueue)
    }
    if cursor.literal("dealloc\",\"t\":") {
      guard let dealloc = cursor.dealloc(), cursor.atEnd() else { return nil }
      return .dealloc(dealloc)
    }
    if cursor.literal("drain\",\"t\":") {
      guard let drain = cursor.drain(&interner), cursor.atEnd() else { return nil }
      return .drain(drain)
    }
    return nil
  }

  /// Consumes the closing `}` when it is the line's last byte.
  @inline(__always)
  private mutating func atEnd() -> Bool {
    literal("}") && index == end
  }

  // MARK: The kinds, in the recorder's field order (DeallocTrace's LogWriter).

  private mutating func enqueue(_ interner: inout StringInterner) -> EnqueueRecord? {
    guard let time = time(), literal(",\"id\":"), let id = integer(),
      literal(",\"obj\":"), let object = hexString(),
      literal(",\"type\":"), let type = string(&interner),
      literal(",\"q\":"), let queue = string(&interner)
    else { return nil }
    var record = EnqueueRecord(
      time: time, id: UInt64(id), object: Address(object), type: type, queue: queue)
    if literal(",\"tid\":") {
      guard let tid = integer() else { return nil }
      record.tid = tid
    }
    if literal(",\"depth\":") {
      guard let depth = count() else { return nil }
      record.depth = depth
    }
    if literal(",\"stack\":") {
      guard let stack = integer() else { return nil }
      record.stack = stack
    }
    if literal(",\"rc\":") {
      guard let retainCount = count() else { return nil }
      record.retainCount = retainCount
    }
    return record
  }

  private mutating func release() -> ReleaseRecord? {
    guard let time = time(), literal(",\"id\":"), let id = integer() else { return nil }
    var tid: Int64?
    if literal(",\"tid\":") {
      guard let value = integer() else { return nil }
      tid = value
    }
    guard literal(",\"freed\":"), let freed = bool() else { return nil }
    var record = ReleaseRecord(time: time, id: UInt64(id), tid: tid, freed: freed)
    if literal(",\"rc\":") {
      guard let retainCount = count() else { return nil }
      record.retainCount = retainCount
    }
    return record
  }

  private mutating func dealloc() -> DeallocRecord? {
    guard let time = time(), literal(",\"id\":"), let id = integer() else { return nil }
    return DeallocRecord(time: time, id: UInt64(id))
  }

  private mutating func drain(_ interner: inout StringInterner) -> DrainRecord? {
    guard let time = time(), literal(",\"q\":"), let queue = string(&interner),
      literal(",\"n\":"), let count = count()
    else { return nil }
    var record = DrainRecord(time: time, queue: queue, count: count)
    if literal(",\"tid\":") {
      guard let tid = integer() else { return nil }
      record.tid = tid
    }
    if literal(",\"why\":") {
      guard let reason = string(&interner) else { return nil }
      record.reason = reason
    }
    return record
  }

  // MARK: Values: each accepts a subset of what the general parser accepts.

  /// Consumes `text` when the line continues with exactly it.
  @inline(__always)
  private mutating func literal(_ text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard index + count <= end else { return false }
    let expected = text.utf8Start
    for offset in 0..<count where base[index + offset] != expected[offset] { return false }
    index += count
    return true
  }

  /// A non-negative integer of 1 to 18 digits, followed by `,` or `}`: what the recorder
  /// writes. A sign, a fraction, an exponent or more digits go to the general parser.
  @inline(__always)
  private mutating func integer() -> Int64? {
    let start = index
    var value: Int64 = 0
    let limit = min(end, start + 18)
    while index < limit {
      let digit = base[index] &- UInt8(ascii: "0")
      if digit > 9 { break }
      value = value &* 10 &+ Int64(digit)
      index += 1
    }
    guard index > start, index < end else { return nil }
    let next = base[index]
    return next == UInt8(ascii: ",") || next == UInt8(ascii: "}") ? value : nil
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

  /// `"0x` and 1 to 16 hex digits `"`.
  @inline(__always)
  private mutating func hexString() -> UInt64? {
    guard literal("\"0x") else { return nil }
    let start = index
    var value: UInt64 = 0
    while index < end, index - start < 16, let digit = JSONScanner.hexDigit(base[index]) {
      value = value << 4 | UInt64(digit)
      index += 1
    }
    guard index > start, literal("\"") else { return nil }
    return value
  }

  @inline(__always)
  private mutating func bool() -> Bool? {
    if literal("true") { return true }
    if literal("false") { return false }
    return nil
  }

  /// A string without escapes, interned as the general parser interns it.
  @inline(__always)
  private mutating func string(_ interner: inout StringInterner) -> String? {
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
