import Foundation

/// A latency distribution regrouped into bins a person reads at a glance: 1, 2, 5 × 10ⁿ
/// nanoseconds (… 10 ms, 20 ms, 50 ms, 100 ms …), equal width on a log axis.
///
/// Why regroup: ``LatencyDistribution`` keeps ~3 % buckets (hundreds of them for a wide
/// distribution), too fine to draw. Each fine bucket goes whole into the display bin holding
/// its midpoint, so a count can land one bin off only within 3 % of an edge. A distribution
/// too narrow for five such bins is drawn with the fine buckets instead.
struct LatencyBins: Sendable, Equatable {
  struct Bin: Sendable, Equatable {
    /// Inclusive lower edge, exclusive upper edge, in nanoseconds.
    var lower: Int64
    var upper: Int64
    var count: Int
  }

  /// Consecutive bins from the one holding the smallest sample to the one holding the
  /// largest (empty bins in between are kept, so the axis stays continuous).
  var bins: [Bin]

  init(_ distribution: LatencyDistribution) {
    let fine = distribution.histogram
    guard !fine.isEmpty else {
      bins = []
      return
    }
    var counts: [Int: Int] = [:]
    for bucket in fine {
      let middle = bucket.lower + (bucket.upper - bucket.lower) / 2
      counts[Self.index(of: middle), default: 0] += bucket.count
    }
    let first = counts.keys.min()!
    let last = counts.keys.max()!
    if last - first + 1 >= Self.minimumBins {
      bins = (first...last).map { index in
        Bin(lower: Self.edge(index), upper: Self.edge(index + 1), count: counts[index] ?? 0)
      }
      return
    }
    // A narrow distribution (every object waited about the queue's delay): draw the fine
    // buckets themselves, with empty neighbours on both sides so the peak has context.
    var fineCounts: [Int: Int] = [:]
    for bucket in fine {
      fineCounts[LatencyDistribution.bucketIndex(bucket.lower), default: 0] += bucket.count
    }
    let low = fineCounts.keys.min()!
    let high = fineCounts.keys.max()!
    let padding = max(2, (Self.minimumFineBins - (high - low + 1) + 1) / 2)
    bins = (max(0, low - padding)...(high + padding)).map { index in
      Bin(
        lower: LatencyDistribution.bucketLower(index),
        upper: LatencyDistribution.bucketLower(index + 1), count: fineCounts[index] ?? 0)
    }
  }

  /// Fewer 1-2-5 bins than this switch to the fine buckets.
  static let minimumBins = 5
  /// Fine buckets drawn at least, padding included.
  static let minimumFineBins = 15

  /// The lower edge of bin `index`: 0, then 1, 2, 5, 10, 20, 50… nanoseconds.
  static func edge(_ index: Int) -> Int64 {
    guard index > 0 else { return 0 }
    let decade = (index - 1) / 3
    let factor: Int64 = [1, 2, 5][(index - 1) % 3]
    var power: Int64 = 1
    for _ in 0..<min(decade, 18) { power *= 10 }
    let (value, overflow) = factor.multipliedReportingOverflow(by: power)
    return overflow ? .max : value
  }

  /// The bin holding `value`.
  static func index(of value: Int64) -> Int {
    guard value > 0 else { return 0 }
    var index = 1
    while index < 57, edge(index + 1) <= value { index += 1 }
    return index
  }

  /// Where `value` falls inside bin `index`, from 0 to 1, on a log scale.
  static func fraction(of value: Int64, inBin bin: Bin) -> Double {
    guard bin.lower > 0, value > bin.lower else { return 0 }
    guard value < bin.upper else { return 1 }
    let lower = log(Double(bin.lower))
    let upper = log(Double(bin.upper))
    return (log(Double(value)) - lower) / (upper - lower)
  }
}
