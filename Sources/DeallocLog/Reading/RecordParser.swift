/// Decodes one line of a v1 log into a ``LogRecord``.
///
/// Fields may come in any order and unknown fields are skipped. Required fields (per the
/// contract) that are missing or of the wrong type make the line malformed; optional ones
/// that are malformed are malformed too, because a writer that gets them wrong cannot be
/// trusted on the rest of the line. Times and counts outside ``LogLimits`` are malformed as
/// well, so that nothing downstream can overflow.
struct RecordParser {
  private var interner = StringInterner()
  /// The build id of each module of the current session, from the frame that introduced
  /// it (`build_id`): every later frame of that module carries it too, so a symbolizer can
  /// tell a rebuilt file. Emptied at each `session` record.
  private var moduleBuildIDs: [String: String] = [:]

  /// Parses one line (without its newline): lines in the recorder's own shape through
  /// ``RecorderShapeParser``, every other through ``parseAnyShape(_:)``.
  mutating func parse(_ line: UnsafeBufferPointer<UInt8>) throws(Failure) -> LogRecord {
    if let record = RecorderShapeParser.parse(line, interner: &interner) { return record }
    return try parseAnyShape(line)
  }

  /// The enqueue record of a line ``RecorderShapeParser/hotLine(_:)`` found, its names
  /// interned as ``parse(_:)`` interns them; `nil` when the rest is not in the recorder's
  /// shape (then ``parse(_:)`` reads the line as any other).
  mutating func enqueue(after cursor: inout RecorderShapeParser) -> EnqueueRecord? {
    cursor.finishEnqueue(&interner)
  }

  /// Field names packed into integers (``JSONScanner/pack(_:)-(StaticString)``), written as
  /// literals so that matching a key costs no lazy initialization; a test checks each one.
  enum Key {
    static let ev: UInt64 = 0x7665  // "ev"
    static let t: UInt64 = 0x74  // "t"
    static let v: UInt64 = 0x76  // "v"
    static let id: UInt64 = 0x6469  // "id"
    static let obj: UInt64 = 0x6a626f  // "obj"
    static let type: UInt64 = 0x6570_7974  // "type"
    static let q: UInt64 = 0x71  // "q"
    static let tid: UInt64 = 0x646974  // "tid"
    static let depth: UInt64 = 0x68_7470_6564  // "depth"
    static let stack: UInt64 = 0x6b_6361_7473  // "stack"
    static let rc: UInt64 = 0x6372  // "rc"
    static let n: UInt64 = 0x6e  // "n"
    static let why: UInt64 = 0x796877  // "why"
    static let freed: UInt64 = 0x64_6565_7266  // "freed"
    static let label: UInt64 = 0x6c_6562_616c  // "label"
    static let alive: UInt64 = 0x65_7669_6c61  // "alive"
    static let pid: UInt64 = 0x646970  // "pid"
    static let exe: UInt64 = 0x657865  // "exe"
    static let wall: UInt64 = 0x6c6c_6177  // "wall"
    static let delayMs: UInt64 = 0x736d_5f79_616c_6564  // "delay_ms"
    static let frames: UInt64 = 0x7365_6d61_7266  // "frames"
    static let name: UInt64 = 0x656d_616e  // "name"
    static let pending: UInt64 = 0x67_6e69_646e_6570  // "pending"
    static let lost: UInt64 = 0x7473_6f6c  // "lost"
    static let ip: UInt64 = 0x7069  // "ip"
    static let mod: UInt64 = 0x646f6d  // "mod"
    static let off: UInt64 = 0x66666f  // "off"
    static let sym: UInt64 = 0x6d7973  // "sym"
    static let buildID: UInt64 = 0x6469_5f64_6c69_7562  // "build_id"
    static let holders: UInt64 = 0x73_7265_646c_6f68  // "holders"
    static let direct = HolderValueParser.Key.direct
    static let more = HolderValueParser.Key.more
    static let paths = HolderValueParser.Key.paths
    static let scanUs = HolderValueParser.Key.scanUs
    static let surplus = HolderValueParser.Key.surplus
    static let maxSize: UInt64 = 0x657a_6973_5f78_616d  // "max_size"
    /// Longer than 8 bytes: matched whole by `JSONScanner.longKey`.
    static let unwritten: UInt64 = JSONScanner.longKeyUnwritten
    /// Longer than 8 bytes: matched whole by `JSONScanner.longKey`.
    static let holderScans: UInt64 = JSONScanner.longKeyHolderScans
    static let holderScansSkipped: UInt64 = JSONScanner.longKeyHolderScansSkipped
    /// Longer than 8 bytes: matched whole by `JSONScanner.longKey`.
    static let allocStack: UInt64 = JSONScanner.longKeyAllocStack
    static let history: UInt64 = 0x79_726f_7473_6968  // "history"
  }

  /// Record kinds, packed the same way.
  enum Kind {
    static let session: UInt64 = 0x6e_6f69_7373_6573  // "session"
    static let thread: UInt64 = 0x6461_6572_6874  // "thread"
    static let stack: UInt64 = 0x6b_6361_7473  // "stack"
    static let enqueue: UInt64 = 0x65_7565_7571_6e65  // "enqueue"
    static let drain: UInt64 = 0x6e_6961_7264  // "drain"
    static let release: UInt64 = 0x65_7361_656c_6572  // "release"
    static let dealloc: UInt64 = 0x63_6f6c_6c61_6564  // "dealloc"
    static let mark: UInt64 = 0x6b72_616d  // "mark"
    static let check: UInt64 = 0x6b_6365_6863  // "check"
    static let end: UInt64 = 0x646e65  // "end"
    static let holders: UInt64 = 0x73_7265_646c_6f68  // "holders"
    static let cut: UInt64 = 0x747563  // "cut"
  }

  /// Every field any record kind uses; `nil` when absent (or `null`).
  private struct Fields {
    var ev: UInt64 = 0
    /// The kind's bytes, decoded only when the kind is unknown.
    var evRaw: (start: Int, count: Int, escaped: Bool)?
    var t: Int64?
    var v: Int64?
    var id: Int64?
    var obj: UInt64?
    var type: String?
    var typeID = NameID.none
    var q: String?
    var qID = NameID.none
    var tid: Int64?
    var depth: Int64?
    var stack: Int64?
    var rc: Int64?
    var n: Int64?
    var why: String?
    var freed: Bool?
    /// A `holders` record's `allocStack`.
    var allocStack: [Frame]?
    var label: String?
    var alive: Bool?
    var pid: Int64?
    var exe: String?
    var wall: String?
    var delayMs: Double?
    var frameCount: Int64?
    var frameList: [Frame]?
    var name: String?
    var pending: Int64?
    var lost: Int64?
    /// Where the values of the holder fields start: read in ``build`` only for the kind
    /// that defines them (`session`'s `holders`, `end`'s counters, a `holders` record's
    /// value), so that a field of the same name on another kind stays an unknown field,
    /// skipped whatever its shape.
    var holdersOnAt: Int?
    /// `session`'s pattern string or a `holders` record's history object.
    var historyAt: Int?
    var holderScansAt: Int?
    var holderScansSkippedAt: Int?
    var directAt: Int?
    var moreAt: Int?
    var pathsAt: Int?
    var scanUsAt: Int?
    var surplusAt: Int?
    var maxSize: Int64?
    var unwritten: Int64?
  }

  typealias Failure = JSONScanner.Failure

  /// Parses one line (without its newline) whatever its key order and spacing.
  mutating func parseAnyShape(_ line: UnsafeBufferPointer<UInt8>) throws(Failure) -> LogRecord {
    var scanner = JSONScanner(line)
    var fields = Fields()
    try scanner.expect(UInt8(ascii: "{"), "a JSON object")
    if !scanner.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try scanner.readKey()
        if scanner.consumeNull() { continue }
        try readField(key, into: &fields, from: &scanner)
      } while scanner.consume(UInt8(ascii: ","))
      try scanner.expect(UInt8(ascii: "}"), "',' or '}'")
    }
    scanner.skipWhitespace()
    if !scanner.isAtEnd { throw Failure("unexpected bytes after the JSON object") }
    return try build(fields, scanner)
  }

  /// `v`, which must be a small integer: anything else (`"1"`, `1.5`, `1e300`, `true`) is a
  /// failure that says so, because a reader that cannot tell the log's version must not
  /// guess at the rest of it (and "malformed line" followed by "no 'session' record" sent
  /// users looking in the wrong place).
  private static func readVersion(_ s: inout JSONScanner) throws(Failure) -> Int64 {
    s.skipWhitespace()
    if s.peek() == UInt8(ascii: "\"") {
      let text = (try? s.readString()) ?? ""
      throw Failure("the string \"\(text.prefix(40))\"", isVersion: true)
    }
    guard let value = try? s.readNumber() else {
      throw Failure("a value that is not a number", isVersion: true)
    }
    guard value == value.rounded(), (0...1_000_000).contains(value) else {
      throw Failure("\(value)", isVersion: true)
    }
    return Int64(value)
  }

  private mutating func readField(
    _ key: UInt64, into fields: inout Fields, from scanner: inout JSONScanner
  )
    throws(Failure)
  {
    switch key {
    case Key.ev:
      let raw = try scanner.readRawString()
      if raw.escaped {
        // `"\u0072elease"` is a release: the kind as its plain form reads.
        fields.ev = try scanner.escapedCode(start: raw.start, count: raw.count, long: false)
      } else if raw.count <= 8 && raw.count > 0 {
        fields.ev = scanner.packKey(raw.start, raw.count)
      }
      fields.evRaw = raw
    case Key.t: fields.t = try scanner.readInteger()
    case Key.id: fields.id = try scanner.readInteger()
    case Key.obj: fields.obj = try scanner.readHexString()
    case Key.type:
      (fields.type, fields.typeID) = try interned(scanner, try scanner.readRawString())
    case Key.q: (fields.q, fields.qID) = try interned(scanner, try scanner.readRawString())
    case Key.tid: fields.tid = try scanner.readInteger()
    case Key.depth: fields.depth = try scanner.readInteger()
    case Key.stack: fields.stack = try scanner.readInteger()
    case Key.rc: fields.rc = try scanner.readInteger()
    case Key.n: fields.n = try scanner.readInteger()
    case Key.why: fields.why = try internedOrDecoded(scanner, try scanner.readRawString())
    case Key.freed: fields.freed = try scanner.readBool()
    case Key.label: fields.label = try internedOrDecoded(scanner, try scanner.readRawString())
    case Key.alive: fields.alive = try scanner.readBool()
    case Key.v: fields.v = try Self.readVersion(&scanner)
    case Key.pid: fields.pid = try scanner.readInteger()
    case Key.exe: fields.exe = try scanner.readString()
    case Key.wall: fields.wall = try scanner.readString()
    case Key.delayMs: fields.delayMs = try scanner.readNumber()
    case Key.frames:
      scanner.skipWhitespace()
      if scanner.peek() == UInt8(ascii: "[") {
        fields.frameList = try readFrames(&scanner)
      } else {
        fields.frameCount = try scanner.readInteger()
      }
    case Key.allocStack: fields.allocStack = try readFrames(&scanner)
    case Key.name: fields.name = try scanner.readString()
    case Key.pending: fields.pending = try scanner.readInteger()
    case Key.lost: fields.lost = try scanner.readInteger()
    case Key.holders: fields.holdersOnAt = try Self.skip(&scanner)
    case Key.history: fields.historyAt = try Self.skip(&scanner)
    case Key.direct: fields.directAt = try Self.skip(&scanner)
    case Key.more: fields.moreAt = try Self.skip(&scanner)
    case Key.paths: fields.pathsAt = try Self.skip(&scanner)
    case Key.scanUs: fields.scanUsAt = try Self.skip(&scanner)
    case Key.surplus: fields.surplusAt = try Self.skip(&scanner)
    case Key.holderScans: fields.holderScansAt = try Self.skip(&scanner)
    case Key.holderScansSkipped: fields.holderScansSkippedAt = try Self.skip(&scanner)
    case Key.maxSize: fields.maxSize = try scanner.readInteger()
    case Key.unwritten: fields.unwritten = try scanner.readInteger()
    default: try scanner.skipValue()
    }
  }

  /// Skips a value and returns where it starts, for reading it later.
  private static func skip(_ s: inout JSONScanner) throws(Failure) -> Int {
    s.skipWhitespace()
    let start = s.index
    try s.skipValue()
    return start
  }

  /// Reads the value that starts at `start` (from ``skip(_:)``) with `read`.
  private static func value<T>(
    at start: Int?, _ scanner: JSONScanner,
    _ read: (inout JSONScanner) throws(Failure) -> T
  ) throws(Failure) -> T? {
    guard let start else { return nil }
    var s = scanner
    s.index = start
    return try read(&s)
  }

  private mutating func internedOrDecoded(
    _ s: JSONScanner, _ raw: (start: Int, count: Int, escaped: Bool)
  ) throws(Failure) -> String {
    if raw.escaped { return try s.decodeString(start: raw.start, count: raw.count, escaped: true) }
    return interner.intern(s.base + raw.start, raw.count).string
  }

  /// A name's shared string and ``NameID``: decoded first when it has escapes, so that
  /// `"Feed\u002eNode"` gets the id of `"Feed.Node"`.
  private mutating func interned(
    _ s: JSONScanner, _ raw: (start: Int, count: Int, escaped: Bool)
  ) throws(Failure) -> (String, NameID) {
    if raw.escaped {
      let decoded = try s.decodeString(start: raw.start, count: raw.count, escaped: true)
      return interner.intern(decoded)
    }
    return interner.intern(s.base + raw.start, raw.count)
  }

  /// Records the build id a frame introduces its module with, or gives a frame without one
  /// the build id its module was introduced with in this session.
  private mutating func carrySessionBuildID(into frame: inout Frame) {
    guard let module = frame.module else { return }
    if let buildID = frame.buildID {
      moduleBuildIDs[module] = buildID
    } else {
      frame.buildID = moduleBuildIDs[module]
    }
  }

  mutating func readFrames(_ s: inout JSONScanner) throws(Failure) -> [Frame] {
    try s.expect(UInt8(ascii: "["), "'['")
    var frames: [Frame] = []
    if s.consume(UInt8(ascii: "]")) { return frames }
    repeat {
      try s.expect(UInt8(ascii: "{"), "a frame object")
      var ip: UInt64?
      var frame = Frame(ip: 0)
      if !s.consume(UInt8(ascii: "}")) {
        repeat {
          let key = try s.readKey()
          if s.consumeNull() { continue }
          switch key {
          case Key.ip: ip = try s.readHexString()
          case Key.mod: frame.module = try internedOrDecoded(s, try s.readRawString())
          case Key.off: frame.offset = try s.readHexString()
          case Key.sym: frame.symbol = try internedOrDecoded(s, try s.readRawString())
          case Key.buildID: frame.buildID = try internedOrDecoded(s, try s.readRawString())
          default: try s.skipValue()
          }
        } while s.consume(UInt8(ascii: ","))
        try s.expect(UInt8(ascii: "}"), "',' or '}' in a frame")
      }
      guard let ip else { throw Failure("stack frame without 'ip'") }
      frame.ip = ip
      carrySessionBuildID(into: &frame)
      frames.append(frame)
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "]"), "',' or ']' in frames")
    return frames
  }

  /// The record `f` describes, per its kind: each kind's builder checks the fields the
  /// contract requires of it and the ranges of its times and counts.
  private mutating func build(_ f: Fields, _ scanner: JSONScanner) throws(Failure) -> LogRecord {
    switch f.ev {
    case Kind.enqueue: return .enqueue(try Self.enqueue(f))
    case Kind.release: return .release(try Self.release(f))
    case Kind.drain: return .drain(try Self.drain(f))
    case Kind.stack:
      return .stack(
        StackRecord(
          id: try Self.need(f.id, "id", "stack"),
          frames: try Self.need(f.frameList, "frames", "stack")))
    case Kind.dealloc:
      return .dealloc(
        DeallocRecord(
          time: try Self.time(f.t, "dealloc"),
          id: try Self.unsigned(try Self.need(f.id, "id", "dealloc"), "id")))
    case Kind.check: return .check(try Self.check(f))
    case Kind.mark:
      return .mark(MarkRecord(time: try Self.time(f.t, "mark"), label: f.label ?? "", tid: f.tid))
    case Kind.thread:
      return .thread(ThreadRecord(tid: try Self.need(f.tid, "tid", "thread"), name: f.name ?? ""))
    case Kind.session:
      moduleBuildIDs.removeAll(keepingCapacity: true)
      return .session(try Self.session(f, scanner))
    case Kind.end: return .end(try Self.end(f, scanner))
    case Kind.holders:
      var record = try Self.holders(f, scanner)
      if let at = f.historyAt {
        var s = scanner
        s.index = at
        record.holders.retainHistory = try readHistory(&s)
      }
      return .holders(record)
    case Kind.cut:
      return .cut(CutRecord(time: try Self.time(f.t, "cut"), maxSize: Self.int(f.maxSize)))
    case CensusRecordParser.kind:
      var census = try CensusRecordParser.parse(scanner)
      for group in census.groups.indices {
        for frame in census.groups[group].allocationStack.indices {
          carrySessionBuildID(into: &census.groups[group].allocationStack[frame])
        }
      }
      return .census(census)
    default:
      guard let raw = f.evRaw else { throw Failure("record without a string 'ev'") }
      return .unknown(kind: try internedOrDecoded(scanner, raw))
    }
  }

  @inline(__always)
  private static func enqueue(_ f: Fields) throws(Failure) -> EnqueueRecord {
    var record = EnqueueRecord(
      time: try time(f.t, "enqueue"),
      id: try unsigned(try need(f.id, "id", "enqueue"), "id"),
      object: Address(try need(f.obj, "obj", "enqueue")),
      type: try need(f.type, "type", "enqueue"),
      queue: try need(f.q, "q", "enqueue"), tid: f.tid, depth: try count(f.depth, "depth"),
      stack: f.stack, retainCount: try count(f.rc, "rc"))
    record.typeID = f.typeID
    record.queueID = f.qID
    return record
  }

  @inline(__always)
  private static func release(_ f: Fields) throws(Failure) -> ReleaseRecord {
    ReleaseRecord(
      time: try time(f.t, "release"),
      id: try unsigned(try need(f.id, "id", "release"), "id"),
      tid: f.tid, freed: try need(f.freed, "freed", "release"),
      retainCount: try count(f.rc, "rc"))
  }

  @inline(__always)
  private static func drain(_ f: Fields) throws(Failure) -> DrainRecord {
    var record = DrainRecord(
      time: try time(f.t, "drain"), queue: try need(f.q, "q", "drain"),
      count: try count(try need(f.n, "n", "drain"), "n")!, tid: f.tid, reason: f.why)
    record.queueID = f.qID
    return record
  }

  private static func check(_ f: Fields) throws(Failure) -> CheckRecord {
    var record = CheckRecord(
      time: try time(f.t, "check"), object: Address(try need(f.obj, "obj", "check")),
      type: try need(f.type, "type", "check"), alive: try need(f.alive, "alive", "check"),
      label: f.label ?? "", id: try f.id.map { (id) throws(Failure) in try unsigned(id, "id") })
    record.typeID = f.typeID
    return record
  }

  private static func session(_ f: Fields, _ scanner: JSONScanner) throws(Failure)
    -> SessionRecord
  {
    SessionRecord(
      version: int(try need(f.v, "v", "session"))!, time: try time(f.t ?? 0, "session"),
      pid: f.pid,
      executable: f.exe, wallClock: f.wall, delayMilliseconds: f.delayMs,
      frames: int(f.frameCount),
      holders: try value(at: f.holdersOnAt, scanner) { (s) throws(Failure) in
        try s.readBool()
      } ?? false,
      historyPatterns: try value(at: f.historyAt, scanner) { (s) throws(Failure) in
        try s.readString()
      })
  }

  private static func end(_ f: Fields, _ scanner: JSONScanner) throws(Failure) -> EndRecord {
    EndRecord(
      time: try time(f.t, "end"), reason: f.why ?? "",
      pending: try count(f.pending, "pending") ?? 0,
      lost: try count(f.lost, "lost") ?? 0,
      unwritten: try count(f.unwritten, "unwritten") ?? 0,
      holderScans: try value(at: f.holderScansAt, scanner) { (s) throws(Failure) in
        try HolderValueParser.count(&s, "holder_scans")
      },
      holderScansSkipped: try value(at: f.holderScansSkippedAt, scanner) {
        (s) throws(Failure) in try HolderValueParser.count(&s, "holder_scans_skipped")
      })
  }

  private static func holders(_ f: Fields, _ scanner: JSONScanner) throws(Failure)
    -> HolderRecord
  {
    func counted(_ at: Int?, _ name: String) throws(Failure) -> Int? {
      try value(at: at, scanner) { (s) throws(Failure) in
        try HolderValueParser.count(&s, name)
      }
    }
    let paths = try need(
      try value(at: f.pathsAt, scanner) { (s) throws(Failure) in
        try HolderValueParser.paths(&s)
      }, "paths", "holders")
    return HolderRecord(
      time: try time(f.t, "holders"),
      id: try f.id.map { (id) throws(Failure) in try unsigned(id, "id") },
      object: Address(try need(f.obj, "obj", "holders")),
      type: try need(f.type, "type", "holders"),
      reason: HolderRecord.Reason(rawValue: try need(f.why, "why", "holders")),
      holders: HolderReport(
        direct: try need(try counted(f.directAt, "direct"), "direct", "holders"),
        more: (try counted(f.moreAt, "more") ?? 0) + paths.dropped,
        paths: paths.kept, surplus: try counted(f.surplusAt, "surplus") ?? 0,
        scanMicroseconds: try counted(f.scanUsAt, "scan_us"),
        allocationStack: f.allocStack ?? []))
  }

  /// A required field's value.
  @inline(__always)
  private static func need<T>(_ value: T?, _ name: String, _ kind: String) throws(Failure) -> T {
    guard let value else { throw Failure("\(kind) record without '\(name)'") }
    return value
  }

  private static func int(_ value: Int64?) -> Int? { value.map { Int(truncatingIfNeeded: $0) } }

  @inline(__always)
  private static func unsigned(_ value: Int64, _ name: String) throws(Failure) -> UInt64 {
    guard value >= 0 else { throw Failure("'\(name)' is negative") }
    return UInt64(value)
  }

  /// A time within ``LogLimits/times``.
  @inline(__always)
  private static func time(_ value: Int64?, _ kind: String) throws(Failure) -> Int64 {
    guard let t = value else { throw Failure("\(kind) record without 't'") }
    guard t >= 0 && t <= LogLimits.maximumTime else {
      throw Failure("'t' is out of range (0 to 2^60 ns since the session's start)")
    }
    return t
  }

  /// A count within ``LogLimits/counts``, when present.
  @inline(__always)
  private static func count(_ value: Int64?, _ name: String) throws(Failure) -> Int? {
    guard let value else { return nil }
    guard value >= 0 && value <= LogLimits.maximumCount else {
      throw Failure("'\(name)' is out of range (0 to 2^48)")
    }
    return Int(value)
  }
}
