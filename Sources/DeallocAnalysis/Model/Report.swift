import DeallocLog

/// Everything a renderer, an exporter's header or a gate needs from an analysis.
///
/// A value type so that renderers are pure functions of it. Its size is bounded: per-object
/// detail survives only in capped lists (``Finding/examples``, ``checks``), everything else
/// is counts, distributions and downsampled series.
public struct Report: Sendable, Equatable {
  /// The inputs as named on the command line (after directory expansion).
  public var inputs: [String]
  public var options: AnalysisOptions
  public var summary: Summary
  /// The first ``AnalysisOptions/maximumListedSessions`` sessions read.
  public var sessions: [SessionReport]
  /// Sessions read beyond those listed (the summary counts them all).
  public var omittedSessions = 0
  /// Grouped by kind and signature, most serious first, then largest first.
  public var findings: [Finding]
  /// Every `check` that saw its object alive, with its verdict, in log order (capped at
  /// ``AnalysisOptions/maximumListedChecks``; the summary counts all).
  public var checks: [CheckVerdict]
  public var latency: LatencySection
  /// Objects per type, by enqueue count (largest first).
  public var types: [TypeRow]
  public var warnings: [LogWarning]
  /// Warnings beyond the cap that were counted but not kept.
  public var omittedWarnings: Int

  /// The deepest any queue got, across all sessions (listed or not); the earliest such
  /// moment when several queues reached it.
  public var peak: QueuePeak?

  /// The false leaks among ``checks``.
  public var falseLeaks: [CheckVerdict] { checks.filter { $0.verdict == .falseLeak } }
  /// The true leaks among ``checks``.
  public var trueLeaks: [CheckVerdict] { checks.filter { $0.verdict == .trueLeak } }

  /// Whether any session is incomplete (no `end`, or a cut-off tail), listed or not.
  public var hasIncompleteSession = false

  /// Whether the recorder scanned for holders, and how many scans it made and skipped.
  public var holders = HolderSummary()

  /// Late objects that have a holders record (`why: "release"`), grouped like findings,
  /// largest first (at most ``LateHeldCollector/maximumGroups`` groups). Empty for a log
  /// recorded without holders.
  public var lateHeld: [LateHeldGroup] = []
  /// Late objects with a holders record in groups beyond those in ``lateHeld``.
  public var omittedLateHeld = 0

  /// The whole-process leak censuses the log holds (empty without `census` records).
  public var census = CensusSection()

  /// Every late object that has a holders record, listed or not.
  public var lateHeldCount: Int { lateHeld.reduce(omittedLateHeld) { $0 + $1.count } }
}

/// The latencies a report shows.
public struct LatencySection: Sendable, Equatable {
  /// Enqueue to release, every released object.
  ///
  /// Recorded beside the per-type ones (``TypeRow/enqueueToRelease``), not derived from them:
  /// percentiles do not merge. Counts, sums and histogram buckets would add up, but a type's
  /// exact samples stop at its smaller exact limit, so the sum of the rows could not give the
  /// exact percentiles this one keeps up to ``LatencyDistribution/defaultExactLimit``.
  public var enqueueToRelease = LatencyDistribution()
  /// Release to dealloc, late objects.
  public var releaseToDealloc = LatencyDistribution()
}

/// The deepest point of one queue.
public struct QueuePeak: Sendable, Equatable {
  /// Whether this peak beats `other`: deeper, or as deep and earlier (by session, then time).
  func isDeeper(than other: QueuePeak) -> Bool {
    (depth, other.session, other.at) > (other.depth, session, at)
  }

  public var queue: String
  public var session: Int
  public var depth: Int
  public var at: Int64

  public init(queue: String, session: Int, depth: Int, at: Int64) {
    self.queue = queue
    self.session = session
    self.depth = depth
    self.at = at
  }
}

/// One session: where it came from, how it ended, its queues and marks.
public struct SessionReport: Sendable, Equatable {
  public var index: Int
  public var file: String
  public var line: Int
  public var header: SessionRecord
  public var end: EndRecord?
  public var truncated: Bool
  /// The largest `t` in the session.
  public var lastTime: Int64
  public var summary: Summary
  public var unknownKinds: [String: Int]
  public var malformedLines: Int
  public var queues: [QueueTimeline]
  /// Marks in log order, within the report's budget (``AnalysisOptions/maximumListedMarks``).
  public var marks: [MarkRecord]
  public var omittedMarks: Int
  /// Thread names, within the report's budget (``AnalysisOptions/maximumThreadNames``).
  public var threads: [Int64: String]

  /// Ended with an `end` record and no cut-off line.
  public var isComplete: Bool { end != nil && !truncated }
}

/// One row of the per-type table.
///
/// Its counts are a ``LifecycleCounts`` (the set a ``Summary`` holds too), read as
/// `row.enqueued` or `row[state]`; the analyzer adds each session's counts of the type here at
/// its end.
@dynamicMemberLookup
public struct TypeRow: Sendable, Equatable {
  public var type: String
  public var counts = LifecycleCounts()
  /// Enqueue to release, objects of this type. The report's
  /// (``LatencySection/enqueueToRelease``) is recorded beside these, not summed from them:
  /// see there.
  public var enqueueToRelease = LatencyDistribution(exactLimit: 1000)

  public init(type: String) {
    self.type = type
  }

  public subscript<Value>(dynamicMember count: WritableKeyPath<LifecycleCounts, Value>) -> Value {
    get { counts[keyPath: count] }
    set { counts[keyPath: count] = newValue }
  }

  public subscript<Value>(dynamicMember count: KeyPath<LifecycleCounts, Value>) -> Value {
    counts[keyPath: count]
  }

  /// The number of objects of this type in `state`.
  public subscript(state: ObjectState) -> Int {
    get { counts[state] }
    set { counts[state] = newValue }
  }
}
