/// The report's counts: the stable `summary` of the JSON format and the input of a gate.
public struct Summary: Sendable, Equatable, Codable {
  public var sessions = 0
  public var enqueued = 0
  /// `release` records: freed + late + leaked.
  public var released = 0
  public var freed = 0
  public var late = 0
  public var leaked = 0
  public var pending = 0
  public var stuck = 0
  public var neverReleased = 0
  /// All `check` records, alive or not.
  public var checks = 0
  public var falseLeaks = 0
  public var trueLeaks = 0

  public init() {}

  /// The count of objects in `state`.
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

  /// The keys in their documented order, with their values (for renderers).
  public var fields: [(key: String, value: Int)] {
    [
      ("sessions", sessions), ("enqueued", enqueued), ("released", released), ("freed", freed),
      ("late", late), ("leaked", leaked), ("pending", pending), ("stuck", stuck),
      ("neverReleased", neverReleased), ("checks", checks), ("falseLeaks", falseLeaks),
      ("trueLeaks", trueLeaks),
    ]
  }
}

extension Summary {
  /// One session's summary, from its counts (every type's) and its `check` records.
  init(session counts: LifecycleCounts, checks: Int) {
    self.init()
    sessions = 1
    enqueued = counts.enqueued
    released = counts.released
    for state in ObjectState.allCases { self[state] = counts[state] }
    self.checks = checks
    falseLeaks = counts.falseLeaks
    trueLeaks = counts.trueLeaks
  }

  /// Adds another summary's counts to this one.
  mutating func add(_ other: Summary) {
    sessions += other.sessions
    enqueued += other.enqueued
    released += other.released
    freed += other.freed
    late += other.late
    leaked += other.leaked
    pending += other.pending
    stuck += other.stuck
    neverReleased += other.neverReleased
    checks += other.checks
    falseLeaks += other.falseLeaks
    trueLeaks += other.trueLeaks
  }
}
