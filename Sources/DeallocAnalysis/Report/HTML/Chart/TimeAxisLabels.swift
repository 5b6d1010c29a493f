import DeallocLog

/// Tick labels of a time axis: every label of one axis in the same unit, with only the
/// decimals its step needs (`0`, `2 s`, `4 s` rather than `2000.0 ms`, `4000.0 ms`).
///
/// Why not ``TimeFormatting``: it formats one instant for reading, switching units at 1 ms
/// and 10 s; an axis reads better in the one unit its step suggests.
enum TimeAxisLabels {
  /// The label of `nanoseconds` on an axis whose ticks are `step` nanoseconds apart and whose
  /// largest tick is `maximum`: the unit is the largest one `maximum` reaches.
  static func label(_ nanoseconds: Double, step: Double, maximum: Double) -> String {
    if nanoseconds == 0 { return "0" }
    let units: [(size: Double, name: String)] = [
      (1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1, "ns"),
    ]
    let unit = units.first { maximum >= $0.size } ?? units[units.count - 1]
    let value = nanoseconds / unit.size
    let stepInUnit = step / unit.size
    var decimals = 0
    var scaled = stepInUnit
    while decimals < 3, (scaled - scaled.rounded()).magnitude > 1e-6 {
      decimals += 1
      scaled *= 10
    }
    return format(value, decimals: decimals) + " " + unit.name
  }

  private static func format(_ value: Double, decimals: Int) -> String {
    var factor = 1.0
    for _ in 0..<decimals { factor *= 10 }
    // Chart domains are log times (at most 2⁶⁰ ns), far inside Int64; the guard only keeps a
    // non-finite or absurd value from trapping the conversion.
    let product = (value * factor).rounded()
    guard product.isFinite, product.magnitude < 9e18 else { return "?" }
    let scaled = Int64(product)
    let whole = scaled / Int64(factor)
    guard decimals > 0 else { return String(whole) }
    var fraction = String((scaled % Int64(factor)).magnitude)
    fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
    return "\(whole).\(fraction)"
  }
}
