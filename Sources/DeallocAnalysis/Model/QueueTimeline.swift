/// One queue's depth over a session, downsampled to at most ``capacity`` points.
///
/// Why downsample: a queue's depth changes twice per object; the HTML timeline needs its
/// shape, not every change. Each point keeps the maximum depth of its time bucket, so peaks
/// are never averaged away. When the series fills, neighbouring points merge and the bucket
/// width doubles; the exact peak is kept separately.
public struct QueueTimeline: Sendable, Equatable {
  public static let capacity = 1024

  public var queue: String
  public var session: Int
  /// (time, maximum depth in the bucket starting at that time), in time order.
  public private(set) var points: [DepthPoint] = []
  public private(set) var peakDepth = 0
  public private(set) var peakTime: Int64 = 0
  public var enqueued = 0
  public var drains = 0
  /// Drains of batches that reached the queue's `maxPending` (`why: "bound"`).
  public var boundDrains = 0
  /// The tracked depth now (enqueue `depth` fields, minus releases since).
  public private(set) var depth = 0
  /// Whether the series is kept: a report keeps it for a bounded number of timelines
  /// (``AnalysisOptions/maximumDetailedTimelines``); the others keep counts and the peak only.
  public internal(set) var keepsPoints = true
  private var bucketWidth: Int64 = 1

  public init(queue: String, session: Int) {
    self.queue = queue
    self.session = session
  }

  /// Records the depth at `time`.
  public mutating func record(depth newDepth: Int, at time: Int64) {
    depth = max(0, newDepth)
    if depth > peakDepth {
      peakDepth = depth
      peakTime = time
    }
    guard keepsPoints else { return }
    if let last = points.last, time < last.t + bucketWidth {
      // Written only when deeper: a write to the array checks its uniqueness first.
      if depth > last.depth { points[points.count - 1].depth = depth }
      return
    }
    points.append(DepthPoint(t: time, depth: depth))
    if points.count > Self.capacity { compact() }
  }

  /// Records the depth after one release.
  public mutating func recordRelease(at time: Int64) {
    record(depth: depth - 1, at: time)
  }

  private mutating func compact() {
    bucketWidth *= 2
    var merged: [DepthPoint] = []
    merged.reserveCapacity(Self.capacity)
    for point in points {
      if let last = merged.last, point.t < last.t + bucketWidth {
        merged[merged.count - 1].depth = max(last.depth, point.depth)
      } else {
        merged.append(point)
      }
    }
    points = merged
    if points.count > Self.capacity { compact() }
  }
}

/// A point of a ``QueueTimeline``.
public struct DepthPoint: Sendable, Equatable, Codable {
  public var t: Int64
  public var depth: Int
}
