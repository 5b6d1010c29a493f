import CElf
import Foundation
import Testing

/// The one sorted symbol index (`celf_symbol_index`) at its edges, on rows made here: the
/// symbolizer asks it for functions (a zero size reaches the next symbol, the nearest symbol
/// only), the holder scan for data (a zero size reaches one word, nested symbols looked
/// back over).
@Suite struct SymbolIndexTests {
  /// Rows sorted and merged by `celf_index_sort`, given in the order listed, which is their
  /// walk order.
  private final class Table {
    var rows: [celf_symbol]
    var count = 0
    private var names: [UnsafeMutablePointer<CChar>] = []

    init(_ symbols: [(value: UInt, size: Int, name: String)]) {
      let copies = symbols.map { strdup($0.name)! }
      names = copies
      rows = symbols.enumerated().map { order, symbol in
        celf_symbol(
          value: symbol.value, size: symbol.size, name: UnsafePointer(copies[order]), order: order)
      }
      count = rows.withUnsafeMutableBufferPointer { celf_index_sort($0.baseAddress, $0.count) }
    }

    deinit {
      for name in names { free(name) }
    }

    /// The name of the symbol containing `address`, as `celf_index_containing` finds it.
    func containing(_ address: UInt, reach: Int, nesting: Int) -> String? {
      rows.withUnsafeBufferPointer { buffer in
        var index = celf_symbol_index(rows: buffer.baseAddress, count: count)
        return celf_index_containing(&index, address, reach, nesting).map {
          String(cString: $0.pointee.name)
        }
      }
    }

    func data(_ address: UInt) -> String? { containing(address, reach: 8, nesting: 8) }
    func code(_ address: UInt) -> String? { containing(address, reach: Int.max, nesting: 1) }

    func atOrBelow(_ address: UInt) -> String? {
      rows.withUnsafeBufferPointer { buffer in
        var index = celf_symbol_index(rows: buffer.baseAddress, count: count)
        return celf_index_at_or_below(&index, address).map { String(cString: $0.pointee.name) }
      }
    }
  }

  private let table = Table([
    (0x300, 8, "third"), (0x100, 0x10, "first"), (0x200, 0, "unsized"),
  ])

  @Test func anAddressBeforeTheFirstSymbolHasNone() {
    #expect(table.data(0xff) == nil)
    #expect(table.code(0xff) == nil)
    #expect(table.atOrBelow(0xff) == nil)
    #expect(table.data(0) == nil)
  }

  @Test func aSymbolCoversItsStartThroughItsLastByteAndNotOnePastItsEnd() {
    for lookup in [table.data, table.code] {
      #expect(lookup(0x100) == "first")
      #expect(lookup(0x10f) == "first")
      #expect(lookup(0x110) == nil)
      #expect(lookup(0x300) == "third")
      #expect(lookup(0x307) == "third")
      #expect(lookup(0x308) == nil)
      #expect(lookup(UInt.max) == nil)
    }
  }

  @Test func anAddressBetweenSymbolsHasNoneButTheNearestBelowIsThere() {
    #expect(table.data(0x180) == nil)
    #expect(table.code(0x180) == nil)
    #expect(table.atOrBelow(0x180) == "first")
  }

  @Test func aZeroSizeSymbolReachesAWordOfDataOrUpToTheNextFunction() {
    #expect(table.data(0x200) == "unsized")
    #expect(table.data(0x207) == "unsized")
    #expect(table.data(0x208) == nil)
    #expect(table.code(0x2ff) == "unsized")
    #expect(table.code(0x300) == "third")
  }

  @Test func anEmptyTableFindsNothing() {
    let empty = Table([])
    #expect(empty.count == 0)
    #expect(empty.data(0) == nil)
    #expect(empty.code(0x100) == nil)
    #expect(empty.atOrBelow(UInt.max) == nil)
    var nothing = celf_symbol_index(rows: nil, count: 0)
    #expect(celf_index_containing(&nothing, 0x100, 8, 8) == nil)
    #expect(celf_index_sort(nil, 0) == 0)
  }

  @Test func rowsComeSortedByValue() {
    #expect(table.count == 3)
    #expect(table.rows.prefix(table.count).map(\.value) == [0x100, 0x200, 0x300])
  }

  @Test func aliasesMergeIntoTheFirstNameInWalkOrderWithTheLargestSize() {
    let aliases = Table([
      (0x400, 0, "firstAlias"), (0x400, 0x20, "largestAlias"), (0x400, 4, "smallAlias"),
      (0x100, 8, "alone"),
    ])
    #expect(aliases.count == 2)
    #expect(aliases.data(0x400) == "firstAlias")
    #expect(aliases.data(0x41f) == "firstAlias")
    #expect(aliases.data(0x420) == nil)
    #expect(aliases.data(0x100) == "alone")
  }

  @Test func aNestedSymbolIsLookedBackOverOnlyWhenNestingAllows() {
    let nested = Table([(0x500, 0x40, "outer"), (0x508, 8, "inner")])
    #expect(nested.data(0x508) == "inner")
    #expect(nested.data(0x510) == "outer")
    #expect(nested.code(0x510) == nil)
  }
}
