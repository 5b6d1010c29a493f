import TextEscaping

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
    var text = ShortText()
    if nanoseconds < 0 { text.append("-") }
    if value < 1_000_000 {
      Escaping.appendDecimal((value + 500) / 1000, to: &text)
      text.append(" µs")
    } else if value < 10_000_000_000 {
      let tenths = (value + 50_000) / 100_000
      Escaping.appendDecimal(tenths / 10, to: &text)
      text.append(".")
      Escaping.appendDecimal(tenths % 10, to: &text)
      text.append(" ms")
    } else {
      let hundredths = (value + 5_000_000) / 10_000_000
      Escaping.appendDecimal(hundredths / 100, to: &text)
      text.append(hundredths % 100 < 10 ? ".0" : ".")
      Escaping.appendDecimal(hundredths % 100, to: &text)
      text.append(" s")
    }
    return text.string
  }

  /// The bytes of one formatted time, on the stack: the longest (`-922337203685.48 s`) is
  /// 19 bytes.
  private struct ShortText: ByteSink {
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var count = 0

    mutating func append(_ byte: UInt8) {
      let index = count
      withUnsafeMutableBytes(of: &storage) { $0[index] = byte }
      count += 1
    }

    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
      for byte in bytes { append(byte) }
    }

    mutating func append(_ literal: StaticString) {
      literal.withUTF8Buffer { append(contentsOf: $0) }
    }

    var string: String {
      withUnsafeBytes(of: storage) {
        String(decoding: UnsafeRawBufferPointer(rebasing: $0[..<count]), as: UTF8.self)
      }
    }
  }

  /// Milliseconds with three decimals, for machine-readable output.
  public static func milliseconds(_ nanoseconds: Int64) -> Double {
    Double(nanoseconds) / 1_000_000
  }
}
