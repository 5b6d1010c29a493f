/// A latency distribution in bounded memory: exact below ``exactLimit`` samples, then a
/// log-linear histogram with about 3 % resolution.
///
/// Why both: fixtures and small runs get exact percentiles (stable golden files), and a log
/// of a billion objects still costs a few kilobytes. The histogram buckets are also what the
/// HTML report draws.
public struct LatencyDistribution: Sendable, Equatable {
  /// The default number of samples kept exactly.
  public static let defaultExactLimit = 100_000
  /// Sub-buckets per power of two.
  static let subBuckets = 32

  public private(set) var count = 0
  public private(set) var sum: Int64 = 0
  public private(set) var minimum: Int64 = .max
  public private(set) var maximum: Int64 = .min
  private var exact: [Int64] = []
  private var buckets: [Int] = []
  /// Up to this many samples, percentiles are exact.
  public let exactLimit: Int

  public init(exactLimit: Int = LatencyDistribution.defaultExactLimit) {
    self.exactLimit = exactLimit
  }

  public mutating func add(_ nanoseconds: Int64) {
    let value = max(0, nanoseconds)
    count += 1
    // Saturates rather than wraps: a mean that is too small beats a negative one.
    let (total, overflow) = sum.addingReportingOverflow(value)
    sum = overflow ? .max : total
    minimum = min(minimum, value)
    maximum = max(maximum, value)
    // The buckets wait until the exact samples are dropped: filled from them then, they
    // hold what adding each sample to them would have, and a distribution that stays exact
    // (every type's, usually) never pays for them.
    if count <= exactLimit {
      exact.append(value)
      return
    }
    if !exact.isEmpty {
      buckets = Self.buckets(of: exact)
      exact = []
    }
    Self.addToBuckets(value, &buckets)
  }

  private static func addToBuckets(_ value: Int64, _ buckets: inout [Int]) {
    let index = bucketIndex(value)
    if index >= buckets.count { buckets += Array(repeating: 0, count: index + 1 - buckets.count) }
    buckets[index] += 1
  }

  private static func buckets(of samples: [Int64]) -> [Int] {
    var buckets: [Int] = []
    for sample in samples { addToBuckets(sample, &buckets) }
    return buckets
  }

  /// Whether percentiles are exact.
  public var isExact: Bool { count <= exactLimit }

  /// The value at `fraction` (0…1) by the nearest-rank method; `nil` when empty.
  public func percentile(_ fraction: Double) -> Int64? {
    percentiles([fraction])?[0]
  }

  /// The values at `fractions` by the nearest-rank method, the exact samples selected once
  /// for all of them (``RankSelection``); `nil` when empty.
  private func percentiles(_ fractions: [Double]) -> [Int64]? {
    guard count > 0 else { return nil }
    let ranks = fractions.map { min(count, max(1, Int(($0 * Double(count)).rounded(.up)))) }
    if isExact {
      return RankSelection.values(at: ranks.map { $0 - 1 }, in: exact)
    }
    return ranks.map { rank in
      var seen = 0
      for (index, n) in buckets.enumerated() {
        seen += n
        if seen >= rank { return min(maximum, max(minimum, Self.bucketMiddle(index))) }
      }
      return maximum
    }
  }

  /// The distribution's summary: count, min, p50, p90, p99, max, mean.
  public var stats: LatencyStats? {
    guard let values = percentiles([0.5, 0.9, 0.99]) else { return nil }
    return LatencyStats(
      count: count, min: minimum, p50: values[0], p90: values[1], p99: values[2], max: maximum,
      mean: sum / Int64(count))
  }

  /// The histogram as (lower bound, upper bound, count), skipping empty buckets.
  public var histogram: [(lower: Int64, upper: Int64, count: Int)] {
    (isExact ? Self.buckets(of: exact) : buckets).enumerated().compactMap { index, n in
      guard n > 0 else { return nil }
      let next = Self.bucketLower(index + 1)
      return (Self.bucketLower(index), next == .max ? .max : next - 1, n)
    }
  }

  static func bucketIndex(_ value: Int64) -> Int {
    if value < Int64(subBuckets) { return Int(value) }
    let exponent = 63 - value.leadingZeroBitCount  // >= 5
    let shift = exponent - 5
    let mantissa = Int(value >> shift) - subBuckets  // 0..<32
    return subBuckets + (exponent - 5) * subBuckets + mantissa
  }

  /// The lower bound of bucket `index`; `Int64.max` past the last bucket (`Int64.max`'s own).
  static func bucketLower(_ index: Int) -> Int64 {
    if index < subBuckets { return Int64(index) }
    let step = (index - subBuckets) / subBuckets
    let mantissa = (index - subBuckets) % subBuckets
    let lower = Int64(subBuckets + mantissa)
    // `lower` is below 2⁶: shifted by 58 or more it no longer fits in 63 bits.
    guard step <= 57 else { return .max }
    return lower << step
  }

  static func bucketMiddle(_ index: Int) -> Int64 {
    let lower = bucketLower(index)
    return lower + (bucketLower(index + 1) - lower) / 2
  }
}

/// Percentiles of one latency, in nanoseconds.
public struct LatencyStats: Sendable, Equatable, Codable {
  public var count: Int
  public var min: Int64
  public var p50: Int64
  public var p90: Int64
  public var p99: Int64
  public var max: Int64
  public var mean: Int64

  public init(count: Int, min: Int64, p50: Int64, p90: Int64, p99: Int64, max: Int64, mean: Int64) {
    self.count = count
    self.min = min
    self.p50 = p50
    self.p90 = p90
    self.p99 = p99
    self.max = max
    self.mean = mean
  }
}
