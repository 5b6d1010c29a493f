import DeallocLog

/// Parses durations given on the command line: `1s`, `250ms`, `2.5s`, `500us`, `100ns`.
public enum DurationParsing {
  /// The duration in nanoseconds.
  /// - Throws: ``AnalysisError/invalidDuration(_:)`` for anything else (a bare number is
  ///   refused: a unit-less `1` is ambiguous).
  public static func nanoseconds(_ text: String) throws(AnalysisError) -> Int64 {
    let units: [(String, Double)] = [
      ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9),
    ]
    for (unit, scale) in units where text.hasSuffix(unit) {
      let number = text.dropLast(unit.count)
      guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }),
        let value = Double(number), value.isFinite, value >= 0, value * scale < 9e18
      else { break }
      return Int64((value * scale).rounded())
    }
    throw .invalidDuration(text)
  }
}
