import Testing

@testable import DeallocLog

/// The recorder-shape fast path must change speed, never a result: on every line it either
/// declines or returns exactly the general parser's record.
@Suite struct RecorderShapeParserTests {
  /// What each path makes of `line`: the fast path's record or `nil`, and the general
  /// parser's record or its failure message.
  private enum Outcome: Equatable {
    case success(LogRecord)
    case failure(String)
  }

  /// What each path makes of `line`. `fast` must be what the reader's path for enqueues and
  /// releases makes of it too (``RecorderShapeParser/hotLine(_:)``): checked here, so that
  /// every test of the fast path checks that one as well.
  private func bothPaths(_ line: [UInt8]) -> (fast: LogRecord?, general: Outcome) {
    var interner = StringInterner()
    var parser = RecordParser()
    return line.withUnsafeBufferPointer { buffer in
      let fast = RecorderShapeParser.parse(buffer, interner: &interner)
      if let hot = RecorderShapeParser.hotLine(buffer) {
        var cursor = hot.cursor
        var hotInterner = StringInterner()
        let record: LogRecord? =
          switch hot.kind {
          case .enqueue: cursor.finishEnqueue(&hotInterner).map { .enqueue($0) }
          case .release: cursor.finishRelease().map { .release($0) }
          }
        #expect(record == fast, "\(String(decoding: line, as: UTF8.self))")
      }
      let general: Outcome
      do {
        general = .success(try parser.parseAnyShape(buffer))
      } catch {
        general = .failure((error as? JSONScanner.Failure)?.message ?? "\(error)")
      }
      return (fast, general)
    }
  }

  /// Lines exactly as DeallocTrace's LogWriter writes them, one per optional-field variant.
  private static let recorderLines = [
    #"{"ev":"enqueue","t":10121527,"id":447,"obj":"0x600000c06fc0","type":"Feed.Node9","q":"shared","tid":4242,"depth":63,"stack":34,"rc":1}"#,
    #"{"ev":"enqueue","t":0,"id":0,"obj":"0x0","type":"","q":"q","tid":1,"depth":0,"rc":2}"#,
    #"{"ev":"enqueue","t":5,"id":1,"obj":"0xFFFFFFFFFFFFFFFF","type":"Ünïcode<Ä>","q":"a b"}"#,
    #"{"ev":"release","t":11685775,"id":385,"tid":4250,"freed":true}"#,
    #"{"ev":"release","t":1662079,"id":3,"tid":4250,"freed":false,"rc":2}"#,
    #"{"ev":"release","t":1,"id":3,"freed":false}"#,
    #"{"ev":"dealloc","t":524079441,"id":10000}"#,
    #"{"ev":"drain","t":11685564,"q":"shared","n":46,"tid":4250,"why":"timer"}"#,
    #"{"ev":"drain","t":1,"q":"shared","n":0}"#,
    #"{"ev":"check","t":1671249,"obj":"0x600000c000c0","type":"Feed.Node21","alive":true,"label":"FeedTests.testClose","id":3,"tid":4242}"#,
    #"{"ev":"check","t":5,"obj":"0x1","type":"T","alive":false,"label":"","tid":1}"#,
    #"{"ev":"check","t":5,"obj":"0x1","type":"T","alive":true,"label":"a b","id":12}"#,
  ]

  @Test(arguments: recorderLines)
  func theRecordersOwnLinesTakeTheFastPathAndAgree(_ line: String) throws {
    let (fast, general) = bothPaths(Array(line.utf8))
    let record = try #require(fast, "the recorder's own shape must not fall back")
    #expect(general == .success(record))
  }

  /// Lines one step off the recorder's shape: the fast path declines each, and the general
  /// parser decides (a record, or the error it always gave).
  @Test(arguments: [
    #"{"ev":"release","t":1,"id":3,"tid":4250,"freed":true} "#,
    #"{"ev":"release", "t":1,"id":3,"freed":true}"#,
    #"{"ev":"release","t":1,"id":3,"freed":true,"rc":1,"rc":2}"#,
    #"{"ev":"release","t":-1,"id":3,"freed":true}"#,
    #"{"ev":"release","t":1.5,"id":3,"freed":true}"#,
    #"{"ev":"release","t":1e3,"id":3,"freed":true}"#,
    #"{"ev":"release","t":1152921504606846977,"id":3,"freed":true}"#,
    #"{"ev":"release","t":1,"id":3,"tid":null,"freed":true}"#,
    #"{"ev":"release","t":1,"id":99999999999999999999,"freed":true}"#,
    #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10000000000000000","type":"T","q":"q"}"#,
    #"{"ev":"enqueue","t":1,"id":1,"obj":"0xg","type":"T","q":"q"}"#,
    #"{"ev":"enqueue","t":1,"id":1,"obj":"0x1","type":"A\"B","q":"q"}"#,
    #"{"ev":"enqueue","t":1,"id":1,"obj":"0x1","type":"T","q":"q","depth":281474976710657}"#,
    #"{"ev":"drain","t":1,"q":"shared","n":1,"why":"timer","extra":true}"#,
    #"{"ev":"dealloc","t":1,"id":2,"tid":7}"#,
    #"{"ev":"dealloc","t":1,"id":2"#,
    #"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":true}"#,
    #"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":true,"label":"a\nb"}"#,
    #"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":1,"label":"l"}"#,
    #"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":true,"label":"l","id":-1}"#,
    #"{"ev":"check","t":1,"obj":"0x1","type":"T","alive":true,"label":"l","tid":7,"id":1}"#,
  ])
  func linesOffTheShapeFallBack(_ line: String) {
    let (fast, _) = bothPaths(Array(line.utf8))
    #expect(fast == nil)
  }

  /// Every single-byte change of a recorder line: whenever the fast path still returns a
  /// record, the general parser returns the same one. (Fails if the fast path accepts a
  /// byte the general parser reads differently or rejects.)
  @Test func noOneByteChangeMakesThePathsDisagree() {
    // `/`, `:`, `;` and 0xFA to 0xFF border the digits in the eight-bytes-at-once integer
    // scan (and make its per-byte add carry).
    let replacements: [UInt8] =
      Array(#" "\,:;/{}[]0179afxAFX-+.eEtn"#.utf8) + [0x00, 0x0A, 0xC3, 0xFA, 0xFF]
    var fastRecords = 0
    for line in Self.recorderLines {
      let bytes = Array(line.utf8)
      for position in bytes.indices {
        for replacement in replacements where replacement != bytes[position] {
          var changed = bytes
          changed[position] = replacement
          let (fast, general) = bothPaths(changed)
          guard let fast else { continue }
          fastRecords += 1
          #expect(
            general == .success(fast), "\(String(decoding: changed, as: UTF8.self))")
        }
      }
    }
    // Digits replaced by digits, hex by hex, and so on keep the shape: the loop did compare.
    #expect(fastRecords > 100)
  }

  /// Object addresses of 1 to 18 hex digits in both cases, whole or with a byte next to the
  /// digit ranges (`/`, `:`, `@`, `G`, `` ` ``, `g`, a byte with its top bit set) in any place:
  /// whenever the fast path (eight digits at a time) returns a record, the general parser
  /// returns the same; up to 16 digits, it always does.
  @Test func hexAddressesAgreeDigitByDigit() {
    let digits = Array("0123456789abcdefABCDEF".utf8)
    let borders: [UInt8] = Array("/:@G`g".utf8) + [0xB3, 0xC3, 0xE6]
    var compared = 0
    for count in 1...18 {
      let address = (0..<count).map { digits[($0 * 7 + count) % digits.count] }
      var variants = [address]
      for position in 0..<count {
        for border in borders {
          var changed = address
          changed[position] = border
          variants.append(changed)
        }
      }
      for variant in variants {
        let line =
          Array(#"{"ev":"enqueue","t":1,"id":1,"obj":"0x"#.utf8) + variant
          + Array(#"","type":"T","q":"q"}"#.utf8)
        let (fast, general) = bothPaths(line)
        if variant == address && count <= 16 {
          #expect(fast != nil, "\(String(decoding: line, as: UTF8.self))")
        }
        guard let fast else { continue }
        compared += 1
        #expect(general == .success(fast), "\(String(decoding: line, as: UTF8.self))")
      }
    }
    #expect(compared >= 16)
  }

  /// Each key's two words spell its text, byte for byte (the words are written out as
  /// constants so that comparing a key costs two compares).
  @Test func everyShapeKeySpellsItsText() {
    for (key, text) in ShapeKey.all {
      let bytes = Array(text.utf8)
      #expect(key.count == bytes.count, "\(text)")
      for (offset, byte) in bytes.enumerated() {
        #expect(key.byte(offset) == byte, "\(text) byte \(offset)")
      }
      let beyondFirst = key.count >= 8 ? 0 : key.first >> UInt64(8 * key.count)
      let beyondSecond = key.count >= 16 ? 0 : key.second >> UInt64(8 * max(0, key.count - 8))
      #expect(beyondFirst == 0 && beyondSecond == 0, "\(text): bits past its end")
      if key.count > 8 {
        let lastEight = bytes.suffix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(key.last == lastEight, "\(text): its last eight bytes")
      }
    }
    #expect(ShapeKey.all.count == Set(ShapeKey.all.map(\.text)).count)
  }
}
