/// Objects enqueued, objects per final state, and the verdicts of alive checks: the one set of
/// counters of the report.
///
/// Why one set: the analyzer counts here only, per type and session; a ``Summary`` and a
/// ``TypeRow`` each hold one (their `summary.freed`, `row.freed` are these fields, by dynamic
/// member lookup), and are sums of the analyzer's, so they cannot drift apart. Named fields,
/// not a dictionary by state: the analyzer updates one for every record.
public struct LifecycleCounts: Sendable, Equatable {
  public var enqueued = 0
  public var freed = 0
  public var late = 0
  public var leaked = 0
  public var pending = 0
  public var stuck = 0
  public var neverReleased = 0
  public var falseLeaks = 0
  public var trueLeaks = 0
  /// The true leaks that saw an object which then ended the session leaked after its
  /// release: counted among ``trueLeaks`` (they are checks that saw a leak) but their
  /// finding is the object's leaked one, so a gate counts them there, with the object.
  public var trueLeaksOfLeaked = 0

  public init() {}

  /// Objects released: each ends freed, late or leaked.
  public var released: Int { freed + late + leaked }

  /// The objects in `state`.
  public subscript(state: ObjectState) -> Int {
    get {
      switch state {
      case .freed: return freed
      case .late: return late
      case .leaked: return leaked
      case .pending: return pending
      case .stuck: return stuck
      case .neverReleased: return neverReleased
      }
    }
    set {
      switch state {
      case .freed: freed = newValue
      case .late: late = newValue
      case .leaked: leaked = newValue
      case .pending: pending = newValue
      case .stuck: stuck = newValue
      case .neverReleased: neverReleased = newValue
      }
    }
  }

  /// Counts an alive check's verdict.
  mutating func count(_ verdict: CheckVerdict.Verdict) {
    switch verdict {
    case .falseLeak: falseLeaks += 1
    case .trueLeak: trueLeaks += 1
    }
  }

  /// A check counted as a false leak turned out a true leak (its object's release, read
  /// later, was timed before it).
  mutating func turnFalseLeakIntoTrueLeak() {
    falseLeaks -= 1
    trueLeaks += 1
  }

  mutating func add(_ other: LifecycleCounts) {
    enqueued += other.enqueued
    freed += other.freed
    late += other.late
    leaked += other.leaked
    pending += other.pending
    stuck += other.stuck
    neverReleased += other.neverReleased
    falseLeaks += other.falseLeaks
    trueLeaks += other.trueLeaks
    trueLeaksOfLeaked += other.trueLeaksOfLeaked
  }
}
