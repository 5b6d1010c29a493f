/// Human formatting of log times (nanoseconds), shared by every renderer so that the same
/// instant reads the same everywhere.
public enum TimeFormatting {
  /// A time since the session's start or a duration: `850 µs` below 1 ms, `12.3 ms` below
  /// 10 s, `12.35 s` above. Integer arithmetic only, so golden files are stable.
  public static func format(_ nanoseconds: Int64) -> String {
    let negative = nanoseconds < 0
    let value = nanoseconds.magnitude
    let text: String
    if value < 1_000_000 {
      text = "\((value + 500) / 1000) µs"
    } else if value < 10_000_000_000 {
      let tenths = (value + 50_000) / 100_000
      text = "\(tenths / 10).\(tenths % 10) ms"
    } else {
      let hundredths = (value + 5_000_000) / 10_000_000
      let fraction = hundredths % 100
      text = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
    return negative ? "-" + text : text
  }

  /// Milliseconds with three decimals, for machine-readable output.
  public static func milliseconds(_ nanoseconds: Int64) -> Double {
    Double(nanoseconds) / 1_000_000
  }
}
