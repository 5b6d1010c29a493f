extension Escaping {
  /// Appends `value` in decimal, as JSON and `String(value)` write it.
  ///
  /// Why bytes, here: the trace writer and the JSON report both write integers by the
  /// hundred thousand, and making a `String` of each cost them more than the digits.
  @inlinable
  public static func appendDecimal(_ value: some BinaryInteger, to out: inout some ByteSink) {
    // 24 bytes: a 64-bit magnitude has at most 20 digits, plus a sign.
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { digits in
      var magnitude = value.magnitude
      var start = digits.count
      repeat {
        start -= 1
        digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      if value < 0 {
        start -= 1
        digits[start] = UInt8(ascii: "-")
      }
      out.append(
        contentsOf: UnsafeBufferPointer(
          start: digits.baseAddress!.assumingMemoryBound(to: UInt8.self) + start,
          count: digits.count - start))
    }
  }

  /// Appends `0x` and `value` in lower-case hex, at least one digit: how the log and the
  /// reports write addresses and offsets (`String(value, radix: 16)` with the prefix).
  @inlinable
  public static func appendHex(_ value: UInt64, to out: inout some ByteSink) {
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { digits in
      digits[0] = UInt8(ascii: "0")
      digits[1] = UInt8(ascii: "x")
      var count = 2
      var shift = max(4, (UInt64.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4)
      while shift > 0 {
        shift -= 4
        let digit = UInt8((value >> UInt64(shift)) & 0xf)
        digits[count] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        count += 1
      }
      out.append(
        contentsOf: UnsafeBufferPointer(
          start: digits.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
    }
  }
}
