/// Human formatting of log times (nanoseconds), shared by every renderer so that the same
/// instant reads the same everywhere.
public enum TimeFormatting {
  /// A time since the session's start or a duration: `850 µs` below 1 ms, `12.3 ms` below
  /// 10 s, `12.35 s` above. Integer arithmetic only, so golden files are stable.
  ///
  /// Written as bytes on the stack, then made a string (small enough to need no memory of
  /// its own): a report's explanations format a few times per sentence for thousands of
  /// checks, and string interpolation cost about a thousand instructions a time.
  public static func format(_ nanoseconds: Int64) -> String {
    let value = nanoseconds.magnitude
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 40) { text in
      var count = 0
      func append(_ bytes: StaticString) {
        bytes.withUTF8Buffer {
          for byte in $0 {
            text[count] = byte
            count += 1
          }
        }
      }
      func append(_ number: UInt64, digits minimum: Int = 1) {
        var length = 0
        var rest = number
        repeat {
          length += 1
          rest /= 10
        } while rest > 0
        length = max(length, minimum)
        rest = number
        for index in stride(from: count + length - 1, through: count, by: -1) {
          text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
          rest /= 10
        }
        count += length
      }
      if nanoseconds < 0 { append("-") }
      if value < 1_000_000 {
        append((value + 500) / 1000)
        append(" µs")
      } else if value < 10_000_000_000 {
        let tenths = (value + 50_000) / 100_000
        append(tenths / 10)
        append(".")
        append(tenths % 10)
        append(" ms")
      } else {
        let hundredths = (value + 5_000_000) / 10_000_000
        append(hundredths / 100)
        append(".")
        append(hundredths % 100, digits: 2)
        append(" s")
      }
      return String(decoding: UnsafeBufferPointer(rebasing: text[..<count]), as: UTF8.self)
    }
  }

  /// Milliseconds with three decimals, for machine-readable output.
  public static func milliseconds(_ nanoseconds: Int64) -> Double {
    Double(nanoseconds) / 1_000_000
  }
}
