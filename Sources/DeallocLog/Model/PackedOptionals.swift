/// Optional integer fields stored as plain values and a bit each that says whether the field
/// is present: the one rule for records that many objects keep or copy.
///
/// Why: an `Optional<Int64>` takes nine bytes and pads its neighbours to eight, so a struct
/// with several of them grows by half (``EnqueueRecord``: from 96 bytes to 120). The price is
/// a computed property per field.
///
/// Public and `@inlinable` for the reason ``WordMix`` gives: the analysis keeps such records
/// too, and called the `package` initializer out of line for every release. Not part of the
/// log's interface.
public struct PackedOptionals: Sendable, Equatable {
  @usableFromInline var present: UInt8 = 0

  @inlinable public init() {}

  /// Fields and flags whose bits are set in `bits` present; each field's value is stored
  /// beside (0 for the others).
  @inlinable @inline(__always)
  public init(bits: UInt8) { present = bits }

  /// Field `bit`'s value, when its bit is set.
  @inlinable @inline(__always)
  public func value<Value>(_ stored: Value, bit: UInt8) -> Value? {
    present & bit != 0 ? stored : nil
  }

  /// Stores field `bit`: its value, or 0 when absent (so that equal records compare equal
  /// field by field), and its bit.
  @inlinable @inline(__always)
  public mutating func store<Value: FixedWidthInteger>(
    _ value: Value?, bit: UInt8, in storage: inout Value
  ) {
    storage = value ?? 0
    present = value == nil ? present & ~bit : present | bit
  }

  /// Whether flag `bit` is set: a `Bool` field kept in the same byte (set through
  /// ``init(bits:)``).
  @inlinable @inline(__always)
  public func flag(_ bit: UInt8) -> Bool { present & bit != 0 }
}
