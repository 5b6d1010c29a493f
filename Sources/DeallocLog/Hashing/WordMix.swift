/// The multiply-and-shift mixes that the reader's and the analyzer's hash tables are built
/// on, in one place: SplitMix64's constants, and the few ways the tables combine them.
///
/// Why not `Hasher`: its per-process seeded SipHash cost a fifth of the analysis, and these
/// tables hash ids, addresses and names for every line. The trade-off: nothing is seeded, so
/// keys crafted to collide make a report slow, never wrong (every table compares the keys).
///
/// Public and `@inlinable` so that the analysis inlines it: the tables sit in two modules and
/// hash on their hottest paths, and this toolchain calls a `package` declaration of another
/// module out of line, a call per constant (callgrind: 1.6 % more instructions for the
/// report). Not part of the log's interface.
public enum WordMix {
  /// 2⁶⁴ divided by the golden ratio, odd: a multiply by it carries every low bit of a key
  /// into the product's high bits (Fibonacci hashing), so tables take their slot from those.
  @inlinable public static var golden: UInt64 { 0x9E37_79B9_7F4A_7C15 }
  /// SplitMix64's first finalizer multiplier.
  @inlinable public static var spread: UInt64 { 0xBF58_476D_1CE4_E5B9 }
  /// SplitMix64's second finalizer multiplier.
  @inlinable public static var finish: UInt64 { 0x94D0_49BB_1331_11EB }

  /// SplitMix64's output for the state `key`: every bit of the result depends on every bit
  /// of the key, for keys that differ in a few low bits (neighbouring addresses) and for a
  /// generator's consecutive states.
  @inlinable @inline(__always)
  public static func splitMix(_ key: UInt64) -> UInt64 {
    var z = key &+ golden
    z = (z ^ (z >> 30)) &* spread
    z = (z ^ (z >> 27)) &* finish
    return z ^ (z >> 31)
  }

  /// Two words as one: every bit of both reaches the product's top bits, where a table takes
  /// its slot (names often differ in one byte of one word).
  @inlinable @inline(__always)
  public static func pair(_ first: UInt64, _ second: UInt64) -> UInt64 {
    (first ^ (second &* golden)) &* spread
  }

  /// The hash of `count` bytes at `pointer`: eight bytes per multiply, then the last one to
  /// seven bytes from the word that ends with them (a word the loop partly hashed already,
  /// whose hashed bytes the shift drops) instead of a loop over them. The count is mixed in
  /// first, so texts that differ only by trailing zero bytes differ.
  @inlinable @inline(__always)
  public static func bytes(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
    bytes(pointer, count, seed: 0)
  }

  /// ``bytes(_:_:)`` from a state that starts at `seed`: with a seed the input cannot see
  /// (one per process), texts chosen to collide under one seed do not under another.
  @inlinable @inline(__always)
  public static func bytes(_ pointer: UnsafePointer<UInt8>, _ count: Int, seed: UInt64) -> UInt64 {
    var h = golden ^ seed ^ UInt64(truncatingIfNeeded: count)
    var k = 0
    while k + 8 <= count {
      let word = UInt64(littleEndian: UnsafeRawPointer(pointer + k).loadUnaligned(as: UInt64.self))
      h = (h ^ word) &* spread
      h ^= h >> 31
      k += 8
    }
    var tail: UInt64 = 0
    if k < count && count >= 8 {
      let last = UInt64(
        littleEndian: UnsafeRawPointer(pointer + count - 8).loadUnaligned(as: UInt64.self))
      tail = last >> UInt64(8 * (8 - (count - k)))
    } else {
      var shift: UInt64 = 0
      while k < count {
        tail |= UInt64(pointer[k]) << shift
        shift += 8
        k += 1
      }
    }
    h = (h ^ tail) &* finish
    return h ^ (h >> 29)
  }
}
