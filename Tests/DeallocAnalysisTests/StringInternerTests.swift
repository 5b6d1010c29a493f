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
          interner.intern($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count)
        }
        #expect(Array(interned.utf8) == bytes)
      }
      #expect(interner.strings.count == strings.count, "pass \(pass)")
    }
  }
}
