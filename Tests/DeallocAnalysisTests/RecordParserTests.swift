import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

@Suite struct RecordParserTests {
  private func parse(_ text: String) throws -> LogRecord {
    var parser = RecordParser()
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBufferPointer { buffer in
      try parser.parse(UnsafeBufferPointer(buffer))
    }
  }

  private func failure(_ text: String) -> String? {
    do {
      _ = try parse(text)
      return nil
    } catch let error as JSONScanner.Failure {
      return error.message
    } catch {
      return "\(error)"
    }
  }

  @Test func everyContractKindIsDecoded() throws {
    #expect(
      try parse(
        #"{"ev":"session","v":1,"t":0,"pid":4242,"exe":"/app/Feed","wall":"W","delay_ms":100,"frames":32}"#
      )
        == .session(
          SessionRecord(
            version: 1, time: 0, pid: 4242, executable: "/app/Feed", wallClock: "W",
            delayMilliseconds: 100, frames: 32)))
    #expect(
      try parse(#"{"ev":"thread","tid":7,"name":"main"}"#)
        == .thread(ThreadRecord(tid: 7, name: "main")))
    #expect(
      try parse(
        #"{"ev":"stack","id":1,"frames":[{"ip":"0x55d0","mod":"/app/Feed","off":"0x1b2c3","sym":"f()"},{"ip":"0x1"}]}"#
      )
        == .stack(
          StackRecord(
            id: 1,
            frames: [
              Frame(ip: 0x55d0, module: "/app/Feed", offset: 0x1b2c3, symbol: "f()"), Frame(ip: 1),
            ])))
    #expect(
      try parse(
        #"{"ev":"enqueue","t":1200,"id":1,"obj":"0x600000c01230","type":"Feed.DataController","q":"shared","tid":4242,"depth":1,"stack":1,"rc":1}"#
      )
        == .enqueue(
          EnqueueRecord(
            time: 1200, id: 1, object: Address(0x6000_00c0_1230), type: "Feed.DataController",
            queue: "shared",
            tid: 4242, depth: 1, stack: 1, retainCount: 1)))
    #expect(
      try parse(#"{"ev":"drain","t":5,"q":"shared","n":1,"tid":4250,"why":"timer"}"#)
        == .drain(DrainRecord(time: 5, queue: "shared", count: 1, tid: 4250, reason: "timer")))
    #expect(
      try parse(#"{"ev":"release","t":9,"id":1,"tid":4250,"freed":false,"rc":2}"#)
        == .release(ReleaseRecord(time: 9, id: 1, tid: 4250, freed: false, retainCount: 2)))
    #expect(
      try parse(#"{"ev":"dealloc","t":10,"id":1}"#) == .dealloc(DeallocRecord(time: 10, id: 1)))
    #expect(
      try parse(#"{"ev":"mark","t":11,"label":"screen closed","tid":1}"#)
        == .mark(MarkRecord(time: 11, label: "screen closed", tid: 1)))
    #expect(
      try parse(#"{"ev":"check","t":12,"obj":"0xabc","type":"T","alive":true,"label":"L","id":3}"#)
        == .check(
          CheckRecord(time: 12, object: Address(0xabc), type: "T", alive: true, label: "L", id: 3)))
    #expect(
      try parse(#"{"ev":"end","t":13,"why":"exit","pending":0,"lost":2}"#)
        == .end(EndRecord(time: 13, reason: "exit", pending: 0, lost: 2)))
  }

  @Test func packedKeyLiteralsMatchTheirNames() {
    typealias K = RecordParser.Key
    let keys: [(StaticString, UInt64)] = [
      ("ev", K.ev), ("t", K.t), ("v", K.v), ("id", K.id), ("obj", K.obj), ("type", K.type),
      ("q", K.q), ("tid", K.tid), ("depth", K.depth), ("stack", K.stack), ("rc", K.rc),
      ("n", K.n), ("why", K.why), ("freed", K.freed), ("label", K.label), ("alive", K.alive),
      ("pid", K.pid), ("exe", K.exe), ("wall", K.wall), ("delay_ms", K.delayMs),
      ("frames", K.frames), ("name", K.name), ("pending", K.pending), ("lost", K.lost),
      ("ip", K.ip), ("mod", K.mod), ("off", K.off), ("sym", K.sym), ("holders", K.holders),
      ("build_id", K.buildID),
    ]
    typealias H = HolderValueParser.Key
    let holderKeys: [(StaticString, UInt64)] = [
      ("direct", H.direct), ("more", H.more), ("paths", H.paths), ("scan_us", H.scanUs),
      ("root", H.root), ("steps", H.steps), ("kind", H.kind), ("field", H.field),
      ("element", H.element), ("count", H.count), ("captures", H.captures), ("type", H.type),
      ("obj", H.obj), ("off", H.off), ("sym", H.sym), ("mod", H.mod), ("tid", H.tid),
    ]
    typealias R = RecordParser.Kind
    let kinds: [(StaticString, UInt64)] = [
      ("session", R.session), ("thread", R.thread), ("stack", R.stack), ("enqueue", R.enqueue),
      ("drain", R.drain), ("release", R.release), ("dealloc", R.dealloc), ("mark", R.mark),
      ("check", R.check), ("end", R.end), ("holders", R.holders),
    ]
    for (name, value) in keys + holderKeys + kinds {
      #expect(JSONScanner.pack(name) == value, "\(name)")
    }
  }

  @Test func fieldsComeInAnyOrderAndUnknownOnesAreSkipped() throws {
    let record = try parse(
      #" { "id" : 4 , "extra":{"a":[1,2,{"b":"}\"]"}]}, "ev":"dealloc", "more":-1.5e3, "t":7, "z":null } "#
    )
    #expect(record == .dealloc(DeallocRecord(time: 7, id: 4)))
  }

  @Test func unknownKindsAreNamed() throws {
    #expect(try parse(#"{"ev":"gc","t":1}"#) == .unknown(kind: "gc"))
    #expect(
      try parse(#"{"ev":"a-much-longer-kind","t":1}"#) == .unknown(kind: "a-much-longer-kind"))
  }

  @Test func stringEscapesAreDecoded() throws {
    let record = try parse(
      #"{"ev":"mark","t":1,"label":"a\"b\\c\/d\n\u00e9\ud83d\ude00 \ud800x","tid":1}"#)
    #expect(record == .mark(MarkRecord(time: 1, label: "a\"b\\c/d\né😀 \u{FFFD}x", tid: 1)))
  }

  @Test func invalidUTF8BecomesReplacementCharacters() throws {
    var parser = RecordParser()
    let bytes: [UInt8] =
      Array(#"{"ev":"mark","t":1,"label":""#.utf8) + [0xFF, 0xC3] + Array(#"","tid":1}"#.utf8)
    let record = try bytes.withUnsafeBufferPointer { try parser.parse($0) }
    #expect(record == .mark(MarkRecord(time: 1, label: "\u{FFFD}\u{FFFD}", tid: 1)))
  }

  @Test func nullMeansAbsent() throws {
    #expect(
      try parse(#"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":false,"label":"L","id":null}"#)
        == .check(
          CheckRecord(time: 1, object: Address(1), type: "T", alive: false, label: "L", id: nil)))
  }

  @Test(arguments: [
    (#"not json"#, "expected a JSON object"),
    (#"{"ev":"enqueue","t":1,"id":1,"type":"T","q":"q"}"#, "enqueue record without 'obj'"),
    (#"{"ev":"release","t":"soon","id":1,"freed":true}"#, "expected an integer"),
    (#"{"ev":"release","t":1.5,"id":1,"freed":true}"#, "found a fraction"),
    (#"{"ev":"release","t":1,"id":-1,"freed":true}"#, "'id' is negative"),
    (#"{"ev":"check","t":1,"obj":"600","type":"T","alive":true,"label":"L"}"#, "hex string"),
    (#"{"ev":"check","t":1,"obj":"0x12345678901234567","type":"T","alive":true}"#, "hex string"),
    (#"{"ev":"dealloc","t":1,"id":1} trailing"#, "unexpected bytes"),
    (#"{"ev":"dealloc","t":1,"id":1"#, "',' or '}'"),
    (#"{"ev":"dealloc","t":99999999999999999999,"id":1}"#, "out of range"),
    (#"{"t":1}"#, "without a string 'ev'"),
    (#"[1,2]"#, "expected a JSON object"),
    (#"{"ev":"stack","id":1,"frames":[{"mod":"x"}]}"#, "without 'ip'"),
    // Times and counts that arithmetic downstream could overflow (see `LogLimits`).
    (#"{"ev":"enqueue","t":-1,"id":1,"obj":"0x1","type":"A","q":"s"}"#, "'t' is out of range"),
    (
      #"{"ev":"enqueue","t":-9223372036854775807,"id":1,"obj":"0x1","type":"A","q":"s"}"#,
      "'t' is out of range"
    ),
    (#"{"ev":"release","t":9223372036854775807,"id":1,"freed":true}"#, "'t' is out of range"),
    (#"{"ev":"dealloc","t":1152921504606846977,"id":1}"#, "'t' is out of range"),
    (#"{"ev":"session","v":1,"t":-5}"#, "'t' is out of range"),
    (
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x1","type":"A","q":"s","depth":9223372036854775807}"#,
      "'depth' is out of range"
    ),
    (
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x1","type":"A","q":"s","rc":-1}"#,
      "'rc' is out of range"
    ),
    (#"{"ev":"drain","t":1,"q":"s","n":-1}"#, "'n' is out of range"),
    (#"{"ev":"end","t":1,"why":"exit","pending":281474976710657}"#, "'pending' is out of range"),
    (#"{"ev":"end","t":1,"why":"exit","lost":-2}"#, "'lost' is out of range"),
  ])
  func malformedLinesSayWhy(_ line: String, _ expected: String) {
    let message = failure(line)
    #expect(message?.contains(expected) == true, "\(line): \(message ?? "parsed")")
  }

  @Test func theLimitsThemselvesAreAccepted() throws {
    #expect(
      try parse(#"{"ev":"dealloc","t":1152921504606846976,"id":9223372036854775807}"#)
        == .dealloc(DeallocRecord(time: LogLimits.maximumTime, id: UInt64(Int64.max))))
    #expect(
      try parse(#"{"ev":"drain","t":0,"q":"s","n":281474976710656}"#)
        == .drain(DrainRecord(time: 0, queue: "s", count: Int(LogLimits.maximumCount))))
    // Two times at the limit add up without overflowing, which is what the limit is for.
    #expect(LogLimits.maximumTime.addingReportingOverflow(LogLimits.maximumTime).overflow == false)
    #expect(LogLimits.maximumCount < Int64(Int.max) - 1)
  }

  /// Any bytes: cut valid lines at every position, flip bytes, and throw random bytes at the
  /// parser. It must answer (a record or a failure), never trap.
  @Test func arbitraryBytesNeverCrash() {
    let valid = [
      #"{"ev":"stack","id":1,"frames":[{"ip":"0x55d0","mod":"/app/Feed","off":"0x1b2c3","sym":"f(\"x\")"}]}"#,
      #"{"ev":"enqueue","t":1200,"id":1,"obj":"0x600000c01230","type":"Feed.D","q":"shared","tid":4242,"depth":1,"stack":1,"rc":1}"#,
      #"{"ev":"mark","t":1,"label":"a\"b\u00e9\ud83d\ude00","tid":1,"x":[[[{"y":null}]]]}"#,
    ]
    var parser = RecordParser()
    var generator = SplitMix(seed: 42)
    var outcomes = 0
    func attempt(_ bytes: [UInt8]) {
      bytes.withUnsafeBufferPointer { buffer in
        _ = try? parser.parse(buffer)
        outcomes += 1
      }
    }
    for line in valid {
      let bytes = Array(line.utf8)
      for cut in 0...bytes.count { attempt(Array(bytes[..<cut])) }
      for _ in 0..<2000 {
        var mutated = bytes
        for _ in 0..<(1 + Int(generator.next() % 4)) {
          mutated[Int(generator.next() % UInt64(mutated.count))] = UInt8(
            truncatingIfNeeded: generator.next())
        }
        attempt(mutated)
      }
    }
    for _ in 0..<5000 {
      let count = Int(generator.next() % 200)
      attempt((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
    }
    #expect(outcomes > 10_000)
  }
}

/// A small deterministic generator, so that a failure reproduces.
struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    defer { state &+= WordMix.golden }
    return WordMix.splitMix(state)
  }
}
