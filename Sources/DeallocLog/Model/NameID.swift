/// The reader's number for a name it interned (a type, a queue, a module…): dense, from 0,
/// in order of first appearance, the same for every record one ``LogReader`` reads (across
/// its inputs), whether the name was written plain or with escapes.
///
/// Why: a consumer that keeps a row per name (the analyzer's type rows and queue timelines)
/// finds it by this number in an array, instead of hashing the name once more.
///
/// A hint, not part of a record's value: a record built by hand has ``none``, and a name past
/// the interner's capacity has none either, so a consumer checks the row it finds against
/// the name and falls back to the name itself. Hence every `NameID` compares equal, so that
/// records stay equal by their fields (a record read back equals the one built by hand); read
/// ``index`` to compare ids.
package struct NameID: Sendable, Equatable {
  private var rawValue: UInt16

  /// No id: the record was not read by a ``LogReader``, or its name was not interned.
  package static let none = NameID(rawValue: .max)
  /// How many ids there are (``none`` is not one of them).
  package static let count = Int(UInt16.max)

  private init(rawValue: UInt16) {
    self.rawValue = rawValue
  }

  /// The id of the `index`th distinct name, `index` below ``count``.
  init(_ index: Int) {
    rawValue = UInt16(index)
  }

  /// The dense number, or `nil` for ``none``.
  @inline(__always)
  package var index: Int? { rawValue == .max ? nil : Int(rawValue) }

  /// Always `true`: see the type's comment.
  package static func == (_: NameID, _: NameID) -> Bool { true }
}
