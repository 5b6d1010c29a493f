import Testing

@testable import DeallocAnalysis

/// ``HashedKey`` hashes its text's bytes once, eight at a time: equal texts must make equal
/// keys whatever their storage, and texts that differ anywhere (a trailing zero byte, the
/// last byte of a partial word, the length alone) must make different keys.
@Suite struct HashedKeyTests {
  @Test func equalTextsAreEqualKeysWhateverTheirStorage() {
    for text in ["", "a", "Feed.Node7", "exactly8", "a text of more than sixteen bytes", "µs é ✓"] {
      // A copy made from bytes: other storage, same text.
      let copy = String(decoding: Array(text.utf8), as: UTF8.self)
      #expect(HashedKey(text) == HashedKey(copy))
      #expect(HashedKey(text).hashValue == HashedKey(copy).hashValue)
      var table: [HashedKey: Int] = [HashedKey(text): 1]
      table[HashedKey(copy), default: 0] += 1
      #expect(table == [HashedKey(text): 2])
    }
  }

  @Test func textsThatDifferAnywhereAreDifferentKeys() {
    // Every length from 0 to 40 of one letter: the same words but for the length and the
    // last partial word.
    let lengths = Set((0...40).map { HashedKey(String(repeating: "x", count: $0)) })
    #expect(lengths.count == 41)
    #expect(HashedKey("ab") != HashedKey("ab\u{0}"))
    #expect(HashedKey("abcdefgh") != HashedKey("abcdefgh\u{0}"))
    let base = Array("Feed.Screen2.step0(animated: Swift.Bool) -> ()".utf8)
    var keys: Set<HashedKey> = [HashedKey(String(decoding: base, as: UTF8.self))]
    for index in base.indices {
      var changed = base
      changed[index] ^= 1
      keys.insert(HashedKey(String(decoding: changed, as: UTF8.self)))
    }
    #expect(keys.count == base.count + 1)
  }
}
