/// Decodes one line of a v1 log into a ``LogRecord``.
///
/// Fields may come in any order and unknown fields are skipped. Required fields (per the
/// contract) that are missing or of the wrong type make the line malformed; optional ones
/// that are malformed are malformed too, because a writer that gets them wrong cannot be
/// trusted on the rest of the line.
struct RecordParser {
  private var interner = StringInterner()

  private enum Key {
    static let ev = JSONScanner.pack("ev")
    static let t = JSONScanner.pack("t")
    static let v = JSONScanner.pack("v")
    static let id = JSONScanner.pack("id")
    static let obj = JSONScanner.pack("obj")
    static let type = JSONScanner.pack("type")
    static let q = JSONScanner.pack("q")
    static let tid = JSONScanner.pack("tid")
    static let depth = JSONScanner.pack("depth")
    static let stack = JSONScanner.pack("stack")
    static let rc = JSONScanner.pack("rc")
    static let n = JSONScanner.pack("n")
    static let why = JSONScanner.pack("why")
    static let freed = JSONScanner.pack("freed")
    static let label = JSONScanner.pack("label")
    static let alive = JSONScanner.pack("alive")
    static let pid = JSONScanner.pack("pid")
    static let exe = JSONScanner.pack("exe")
    static let wall = JSONScanner.pack("wall")
    static let delayMs = JSONScanner.pack("delay_ms")
    static let frames = JSONScanner.pack("frames")
    static let name = JSONScanner.pack("name")
    static let pending = JSONScanner.pack("pending")
    static let lost = JSONScanner.pack("lost")
    static let ip = JSONScanner.pack("ip")
    static let mod = JSONScanner.pack("mod")
    static let off = JSONScanner.pack("off")
    static let sym = JSONScanner.pack("sym")
  }

  private enum Kind {
    static let session = JSONScanner.pack("session")
    static let thread = JSONScanner.pack("thread")
    static let stack = JSONScanner.pack("stack")
    static let enqueue = JSONScanner.pack("enqueue")
    static let drain = JSONScanner.pack("drain")
    static let release = JSONScanner.pack("release")
    static let dealloc = JSONScanner.pack("dealloc")
    static let mark = JSONScanner.pack("mark")
    static let check = JSONScanner.pack("check")
    static let end = JSONScanner.pack("end")
  }

  /// Every field any record kind uses; `nil` when absent (or `null`).
  private struct Fields {
    var ev: UInt64 = 0
    var evText: String?
    var t: Int64?
    var v: Int64?
    var id: Int64?
    var obj: UInt64?
    var type: String?
    var q: String?
    var tid: Int64?
    var depth: Int64?
    var stack: Int64?
    var rc: Int64?
    var n: Int64?
    var why: String?
    var freed: Bool?
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
  }

  typealias Failure = JSONScanner.Failure

  /// Parses one line (without its newline).
  mutating func parse(_ line: UnsafeBufferPointer<UInt8>) throws(Failure) -> LogRecord {
    var scanner = JSONScanner(line)
    var f = Fields()
    try scanner.expect(UInt8(ascii: "{"), "a JSON object")
    if !scanner.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try scanner.readKey()
        if scanner.consumeNull() { continue }
        try readField(key, into: &f, &scanner)
      } while scanner.consume(UInt8(ascii: ","))
      try scanner.expect(UInt8(ascii: "}"), "',' or '}'")
    }
    scanner.skipWhitespace()
    if !scanner.isAtEnd { throw Failure("unexpected bytes after the JSON object") }
    return try build(f)
  }

  private mutating func readField(_ key: UInt64, into f: inout Fields, _ s: inout JSONScanner)
    throws(Failure)
  {
    switch key {
    case Key.ev:
      let raw = try s.readRawString()
      if !raw.escaped && raw.count <= 8 && raw.count > 0 {
        f.ev = JSONScanner.pack(s.base + raw.start, raw.count)
      }
      f.evText = try internedOrDecoded(s, raw)
    case Key.t: f.t = try s.readInteger()
    case Key.id: f.id = try s.readInteger()
    case Key.obj: f.obj = try s.readHexString()
    case Key.type: f.type = try internedOrDecoded(s, try s.readRawString())
    case Key.q: f.q = try internedOrDecoded(s, try s.readRawString())
    case Key.tid: f.tid = try s.readInteger()
    case Key.depth: f.depth = try s.readInteger()
    case Key.stack: f.stack = try s.readInteger()
    case Key.rc: f.rc = try s.readInteger()
    case Key.n: f.n = try s.readInteger()
    case Key.why: f.why = try internedOrDecoded(s, try s.readRawString())
    case Key.freed: f.freed = try s.readBool()
    case Key.label: f.label = try internedOrDecoded(s, try s.readRawString())
    case Key.alive: f.alive = try s.readBool()
    case Key.v: f.v = try s.readInteger()
    case Key.pid: f.pid = try s.readInteger()
    case Key.exe: f.exe = try s.readString()
    case Key.wall: f.wall = try s.readString()
    case Key.delayMs: f.delayMs = try s.readNumber()
    case Key.frames:
      s.skipWhitespace()
      if s.peek() == UInt8(ascii: "[") {
        f.frameList = try readFrames(&s)
      } else {
        f.frameCount = try s.readInteger()
      }
    case Key.name: f.name = try s.readString()
    case Key.pending: f.pending = try s.readInteger()
    case Key.lost: f.lost = try s.readInteger()
    default: try s.skipValue()
    }
  }

  private mutating func internedOrDecoded(
    _ s: JSONScanner, _ raw: (start: Int, count: Int, escaped: Bool)
  ) throws(Failure) -> String {
    if raw.escaped { return try s.decodeString(start: raw.start, count: raw.count, escaped: true) }
    return interner.intern(s.base + raw.start, raw.count)
  }

  private mutating func readFrames(_ s: inout JSONScanner) throws(Failure) -> [Frame] {
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
          default: try s.skipValue()
          }
        } while s.consume(UInt8(ascii: ","))
        try s.expect(UInt8(ascii: "}"), "',' or '}' in a frame")
      }
      guard let ip else { throw Failure("stack frame without 'ip'") }
      frame.ip = ip
      frames.append(frame)
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "]"), "',' or ']' in frames")
    return frames
  }

  private func build(_ f: Fields) throws(Failure) -> LogRecord {
    func need<T>(_ value: T?, _ name: String, _ kind: String) throws(Failure) -> T {
      guard let value else { throw Failure("\(kind) record without '\(name)'") }
      return value
    }
    func int(_ value: Int64?) -> Int? { value.map { Int(truncatingIfNeeded: $0) } }
    func unsigned(_ value: Int64, _ name: String) throws(Failure) -> UInt64 {
      guard value >= 0 else { throw Failure("'\(name)' is negative") }
      return UInt64(value)
    }
    switch f.ev {
    case Kind.enqueue:
      return .enqueue(
        EnqueueRecord(
          t: try need(f.t, "t", "enqueue"), id: try unsigned(try need(f.id, "id", "enqueue"), "id"),
          obj: Address(try need(f.obj, "obj", "enqueue")),
          type: try need(f.type, "type", "enqueue"),
          q: try need(f.q, "q", "enqueue"), tid: f.tid, depth: int(f.depth), stack: f.stack,
          rc: int(f.rc)))
    case Kind.release:
      return .release(
        ReleaseRecord(
          t: try need(f.t, "t", "release"), id: try unsigned(try need(f.id, "id", "release"), "id"),
          tid: f.tid, freed: try need(f.freed, "freed", "release"), rc: int(f.rc)))
    case Kind.drain:
      return .drain(
        DrainRecord(
          t: try need(f.t, "t", "drain"), q: try need(f.q, "q", "drain"),
          n: int(try need(f.n, "n", "drain"))!, tid: f.tid, why: f.why))
    case Kind.stack:
      return .stack(
        StackRecord(
          id: try need(f.id, "id", "stack"), frames: try need(f.frameList, "frames", "stack"))
      )
    case Kind.dealloc:
      return .dealloc(
        DeallocRecord(
          t: try need(f.t, "t", "dealloc"), id: try unsigned(try need(f.id, "id", "dealloc"), "id"))
      )
    case Kind.check:
      return .check(
        CheckRecord(
          t: try need(f.t, "t", "check"), obj: Address(try need(f.obj, "obj", "check")),
          type: try need(f.type, "type", "check"), alive: try need(f.alive, "alive", "check"),
          label: f.label ?? "", id: try f.id.map { (id) throws(Failure) in try unsigned(id, "id") })
      )
    case Kind.mark:
      return .mark(MarkRecord(t: try need(f.t, "t", "mark"), label: f.label ?? "", tid: f.tid))
    case Kind.thread:
      return .thread(ThreadRecord(tid: try need(f.tid, "tid", "thread"), name: f.name ?? ""))
    case Kind.session:
      return .session(
        SessionRecord(
          v: int(try need(f.v, "v", "session"))!, t: f.t ?? 0, pid: f.pid, exe: f.exe,
          wall: f.wall, delayMs: f.delayMs, frames: int(f.frameCount)))
    case Kind.end:
      return .end(
        EndRecord(
          t: try need(f.t, "t", "end"), why: f.why ?? "", pending: int(f.pending) ?? 0,
          lost: int(f.lost) ?? 0))
    default:
      guard let kind = f.evText else { throw Failure("record without a string 'ev'") }
      return .unknown(kind: kind)
    }
  }
}
