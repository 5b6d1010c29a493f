/// Objects enqueued, objects per final state, and the verdicts of alive checks: what the
/// analyzer counts of one type in one session.
///
/// Why one set: the analyzer counts here only, per type and session; a session's ``Summary``
/// and the report's ``TypeRow``s are sums of these, so they cannot drift apart. Named fields,
/// not a dictionary by state: the analyzer updates one for every record.
struct LifecycleCounts: Sendable, Equatable {
  var enqueued = 0
  var freed = 0
  var late = 0
  var leaked = 0
  var pending = 0
  var stuck = 0
  var neverReleased = 0
  var falseLeaks = 0
  var trueLeaks = 0

  /// Objects released: each ends freed, late or leaked.
  var released: Int { freed + late + leaked }

  /// The objects in `state`.
  subscript(state: ObjectState) -> Int {
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
  }
}
