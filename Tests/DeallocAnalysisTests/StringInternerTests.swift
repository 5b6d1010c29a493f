import Testing

@testable import DeallocLog

/// The interner matches strings by a hash of eight-byte words and a tail read from one word:
/// it must never hand back another string's `String`.
@Suite struct StringInternerTests {
  /// Strings of 0 to 40 bytes that differ in one byte anywhere (in a full word, in the tail,
  /// in both where they overlap), interned twice each in mixed order: every answer is its own
  /// bytes, and the table does not grow for a string seen before.
  @Test func oneDifferentByteAnywhereIsAnotherString() {
    var interner = StringInterner()
    var strings: [[UInt8]] = []
    for count in 0...40 {
      let base = (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
      strings.append(base)
      for position in 0..<count {
        var changed = base
        changed[position] = UInt8(ascii: "Z")
        strings.append(changed)
      }
    }
    for pass in 0..<2 {
      for bytes in pass == 0 ? strings : strings.reversed() {
        let interned = bytes.withUnsafeBufferPointer {
          interner.intern($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count).string
        }
        #expect(Array(interned.utf8) == bytes)
      }
      #expect(interner.strings.count == strings.count, "pass \(pass)")
    }
  }
}

/// Every interned name has a dense id in order of first appearance, the same however it is
/// looked up (short or long, by bytes or decoded from escapes).
@Suite struct NameIDTests {
  @Test func idsAreDenseInOrderOfFirstAppearance() {
    var interner = StringInterner()
    let names = ["Feed.Node", "com.example.queue", "", "Module.AVeryLongTypeNameThatIsNotShort"]
    for pass in 0..<3 {
      for (index, name) in names.enumerated() {
        #expect(interner.intern(name).id.index == index, "pass \(pass): \(name)")
      }
    }
    #expect(interner.strings.count == names.count)
  }

  /// The reader gives a name written with escapes the id of its plain form, on both parsers'
  /// records (enqueue, drain, check).
  @Test func anEscapedNameHasItsPlainFormsID() throws {
    var reader = RecordParser()
    func parse(_ line: String) throws -> LogRecord {
      var bytes = Array(line.utf8)
      return try bytes.withUnsafeMutableBufferPointer { try reader.parse(UnsafeBufferPointer($0)) }
    }
    let plain = try parse(
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"Feed.Node","q":"main"}"#)
    let escaped = try parse(
      #"{"ev":"enqueue","t":2,"id":2,"obj":"0x20","type":"Feed.Node","q":"main"}"#)
    let drain = try parse(#"{"ev":"drain","t":3,"q":"main","n":1}"#)
    let check = try parse(
      #"{"ev":"check","t":4,"obj":"0x30","type":"Feed.Node","alive":true,"label":"x"}"#)
    guard case .enqueue(let first) = plain, case .enqueue(let second) = escaped,
      case .drain(let drained) = drain, case .check(let checked) = check
    else {
      Issue.record("unexpected kinds")
      return
    }
    #expect(first.typeID.index == 0 && first.queueID.index == 1)
    #expect(second.type == "Feed.Node" && second.queue == "main")
    #expect(second.typeID.index == 0 && second.queueID.index == 1)
    #expect(drained.queueID.index == 1 && checked.typeID.index == 0)
  }
}

/// Issue 29, item 5: names chosen to collide under the interner's hash made reading
/// quadratic (300,000 names: 68 s against 1.85 s). The hash had no seed and was invertible,
/// so such names were easy to make; now it is seeded per process, its slot comes from its
/// top bits, and a probe never goes past a bound, so each lookup costs at most that bound.
@Suite struct StringInternerCollisionTests {
  /// The inverse of `x ^ (x >> shift)`.
  private static func unshiftRight(_ value: UInt64, _ shift: UInt64) -> UInt64 {
    var result = value
    var step = shift
    while step < 64 {
      result = value ^ (result >> shift)
      step += shift
    }
    return value ^ (result >> shift)
  }

  /// The multiplicative inverse of an odd `a` modulo 2⁶⁴ (Newton's iteration).
  private static func inverse(_ a: UInt64) -> UInt64 {
    var x = a
    for _ in 0..<6 { x = x &* (2 &- a &* x) }
    return x
  }

  /// The eight bytes whose unseeded ``WordMix/bytes(_:_:)`` hash is `hash`: for eight bytes
  /// the hash is one word through invertible steps, so any hash can be had.
  static func word(hashingTo hash: UInt64) -> [UInt8] {
    var h = unshiftRight(hash, 29)
    h = h &* inverse(WordMix.finish)
    h = unshiftRight(h, 31)
    h = h &* inverse(WordMix.spread)
    let word = h ^ WordMix.golden ^ 8
    return withUnsafeBytes(of: word.littleEndian) { Array($0) }
  }

  /// `count` distinct names whose unseeded hashes share their low 32 bits (the slot the
  /// interner used to take), and differ in the rest.
  static func collidingNames(_ count: Int) -> [[UInt8]] {
    (0..<count).map { index in word(hashingTo: UInt64(index + 1) << 32 | 0x5A5A_5A5A) }
  }

  @Test func theNamesCollideUnderTheFixedHash() {
    let names = Self.collidingNames(1000)
    #expect(Set(names).count == names.count)
    for name in names {
      let hash = name.withUnsafeBufferPointer { WordMix.bytes($0.baseAddress!, $0.count) }
      #expect(hash & 0xFFFF_FFFF == 0x5A5A_5A5A)
    }
  }

  /// Interning 5,000 colliding names, then looking each up again, costs a bounded number of
  /// probes per lookup: the old table probed about n²/2 slots (12.5 million here).
  @Test func collidingNamesCostLinearProbes() {
    let names = Self.collidingNames(5000)
    var interner = StringInterner()
    for pass in 0..<2 {
      for name in names {
        let interned = name.withUnsafeBufferPointer {
          interner.intern($0.baseAddress!, $0.count).string
        }
        #expect(Array(interned.utf8) == Array(String(decoding: name, as: UTF8.self).utf8))
      }
      #expect(interner.probes <= names.count * (pass + 1) * 8, "pass \(pass): \(interner.probes)")
    }
  }
}

extension StringInternerCollisionTests {
  /// Past the probe bound a string is still its own bytes, only not shared: a full table of
  /// names is looked up again with every answer right and every lookup bounded.
  @Test func aLookupPastTheBoundStillAnswersTheString() {
    var interner = StringInterner()
    let names = (0..<40_000).map { Array("Module.Type\($0)".utf8) }
    for _ in 0..<2 {
      for name in names {
        let interned = name.withUnsafeBufferPointer {
          interner.intern($0.baseAddress!, $0.count).string
        }
        #expect(Array(interned.utf8) == name)
      }
    }
    #expect(interner.probes <= names.count * 2 * StringInterner.maximumProbes)
    #expect(interner.strings.count == names.count)
  }
}
