/// The report's counts: the stable `summary` of the JSON format and the input of a gate.
///
/// The object counts are a ``LifecycleCounts``, the one set of counters a ``TypeRow`` holds
/// too, read and written as `summary.freed` through dynamic member lookup; only the session
/// and `check` record counts are the summary's own. (API change: `released` is derived,
/// freed + late + leaked, and can no longer be set.) `Codable` in the JSON format's flat
/// shape, the keys of ``fields``.
@dynamicMemberLookup
public struct Summary: Sendable, Equatable {
  public var sessions = 0
  public var counts = LifecycleCounts()
  /// All `check` records, alive or not.
  public var checks = 0

  public init() {}

  public subscript<Value>(dynamicMember count: WritableKeyPath<LifecycleCounts, Value>) -> Value {
    get { counts[keyPath: count] }
    set { counts[keyPath: count] = newValue }
  }

  public subscript<Value>(dynamicMember count: KeyPath<LifecycleCounts, Value>) -> Value {
    counts[keyPath: count]
  }

  /// The count of objects in `state`.
  public subscript(state: ObjectState) -> Int {
    get { counts[state] }
    set { counts[state] = newValue }
  }

  /// The keys in their documented order, each with where its count lives: the one list of
  /// them, for ``fields`` and `Codable`.
  private static var keys: [(name: String, count: KeyPath<Summary, Int>)] {
    [
      ("sessions", \.sessions), ("enqueued", \.counts.enqueued), ("released", \.counts.released),
      ("freed", \.counts.freed), ("late", \.counts.late), ("leaked", \.counts.leaked),
      ("pending", \.counts.pending), ("stuck", \.counts.stuck),
      ("neverReleased", \.counts.neverReleased), ("checks", \.checks),
      ("falseLeaks", \.counts.falseLeaks), ("trueLeaks", \.counts.trueLeaks),
      ("trueLeaksOfLeaked", \.counts.trueLeaksOfLeaked),
    ]
  }

  /// Keys that reports written before them lack: read as 0 when absent.
  private static let addedKeys: Set<String> = ["trueLeaksOfLeaked"]

  /// The keys in their documented order, with their values (for renderers).
  public var fields: [(key: String, value: Int)] {
    Self.keys.map { ($0.name, self[keyPath: $0.count]) }
  }
}

extension Summary: Codable {
  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  public init(from decoder: any Decoder) throws {
    self.init()
    let container = try decoder.container(keyedBy: Key.self)
    // `released` is derived: read only the counts that are stored.
    for (name, count) in Self.keys {
      guard let stored = count as? WritableKeyPath<Summary, Int> else { continue }
      let key = Key(stringValue: name)
      if Self.addedKeys.contains(name), !container.contains(key) { continue }
      self[keyPath: stored] = try container.decode(Int.self, forKey: key)
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    for (key, value) in fields { try container.encode(value, forKey: Key(stringValue: key)) }
  }
}

extension Summary {
  /// One session's summary, from its counts (every type's) and its `check` records.
  init(session counts: LifecycleCounts, checks: Int) {
    self.init()
    sessions = 1
    self.counts = counts
    self.checks = checks
  }

  /// Adds another summary's counts to this one.
  mutating func add(_ other: Summary) {
    sessions += other.sessions
    counts.add(other.counts)
    checks += other.checks
  }
}
