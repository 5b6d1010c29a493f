import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// ``NameRows``: the analyzer's type rows and queue timelines by name, found by ``NameID``.
@Suite struct NameRowsTests {
  /// Rows by name whatever the ids say: no id, an id that names another row (another
  /// reader's), and more names than ids.
  @Test func nameRowsFollowTheNameWhateverItsID() {
    var rows = NameRows()
    var interner = StringInterner()
    let long = interner.intern("Module.AVeryLongTypeNameThatIsNotASmallString")
    #expect(rows.row(long.string, id: long.id) == (0, true))
    // The same characters in another storage and without an id: the dictionary finds it.
    let copy = String(decoding: Array(long.string.utf8), as: UTF8.self)
    #expect(rows.row(copy, id: .none) == (0, false))
    #expect(rows.row(long.string, id: long.id) == (0, false))
    // Another name under the long name's id (a record of another reader): its own row.
    #expect(rows.row("Feed.Node", id: long.id) == (1, true))
    #expect(rows.row(long.string, id: long.id) == (0, false))
    for number in 0..<1000 {
      let name = interner.intern("Type\(number)")
      _ = rows.row(name.string, id: name.id)
    }
    for number in stride(from: 999, through: 0, by: -7) {
      let name = interner.intern("Type\(number)")
      #expect(rows.row(name.string, id: name.id).row == number + 2)
    }
  }

  /// A name seen before with its id is found by the id, not the dictionary.
  @Test func namesWithIDsSkipTheDictionary() {
    var rows = NameRows()
    var interner = StringInterner()
    let names = (0..<100).map { interner.intern("Feed.Node\($0)") }
    for (row, name) in names.enumerated() {
      #expect(rows.row(name.string, id: name.id) == (row, true))
    }
    #expect(rows.dictionaryLookups == names.count)
    for _ in 0..<3 {
      for (row, name) in names.enumerated().reversed() {
        #expect(rows.row(name.string, id: name.id) == (row, false))
      }
    }
    #expect(rows.dictionaryLookups == names.count)
  }
}
