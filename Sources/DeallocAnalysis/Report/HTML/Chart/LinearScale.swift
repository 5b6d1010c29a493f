/// Maps a domain of values (nanoseconds, depths, counts) linearly onto SVG pixels, and picks
/// round tick values for its axis.
///
/// Why its own type: every chart of the HTML report needs the same mapping and the same
/// "1, 2, 5 × 10ⁿ" ticks, and tests can check positions through it instead of re-deriving them.
struct LinearScale: Sendable, Equatable {
  var domain: ClosedRange<Double>
  var range: ClosedRange<Double>
  /// Draws the domain from the range's upper bound down to its lower bound (SVG y axes).
  var flipped = false

  /// The pixel of `value`, clamped to the range.
  func position(_ value: Double) -> Double {
    let span = domain.upperBound - domain.lowerBound
    let fraction = span > 0 ? (value - domain.lowerBound) / span : 0
    let clamped = min(1, max(0, fraction))
    let length = range.upperBound - range.lowerBound
    return flipped
      ? range.upperBound - clamped * length
      : range.lowerBound + clamped * length
  }

  /// At most about `count` round values inside the domain: multiples of 1, 2 or 5 × 10ⁿ.
  func ticks(count: Int) -> [Double] {
    let span = domain.upperBound - domain.lowerBound
    guard span > 0, count > 0 else { return [domain.lowerBound] }
    let step = Self.niceStep(span / Double(count))
    var ticks: [Double] = []
    var value = (domain.lowerBound / step).rounded(.up) * step
    while value <= domain.upperBound + step * 1e-9 {
      ticks.append(value)
      value += step
    }
    return ticks
  }

  /// The smallest of 1, 2, 5 × 10ⁿ that is at least `rough`.
  static func niceStep(_ rough: Double) -> Double {
    guard rough > 0 else { return 1 }
    var magnitude = 1.0
    while magnitude * 10 <= rough { magnitude *= 10 }
    while magnitude > rough { magnitude /= 10 }
    for factor in [1.0, 2, 5, 10] where magnitude * factor >= rough {
      return magnitude * factor
    }
    return magnitude * 10
  }
}

/// SVG number formatting: one decimal at most, no `-0`, no exponent.
enum SVGNumber {
  static func format(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    let tenths = Int64((value * 10).rounded())
    if tenths == 0 { return "0" }
    let sign = tenths < 0 ? "-" : ""
    let magnitude = tenths.magnitude
    return magnitude % 10 == 0
      ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
  }
}
