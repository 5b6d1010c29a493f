/// The limits a CI gate enforces, one per kind of finding.
///
/// Why these defaults: a leaked object, a stuck queue and a true leak are bugs, so none is
/// allowed; an object still queued when the process exited is memory the queue held to the
/// end, usually harmless at exit, so it is counted and shown but unlimited unless asked.
public struct GateThresholds: Sendable, Equatable {
  /// One threshold: the option that sets it and the findings it counts.
  ///
  /// Closed: one threshold per ``Finding/Kind``, which is closed.
  public enum Threshold: String, Sendable, CaseIterable, Codable {
    case leaked
    case stuck
    case trueLeaks
    case neverReleased

    /// The kind of finding it counts.
    public var kind: Finding.Kind {
      switch self {
      case .leaked: return .leaked
      case .stuck: return .stuck
      case .trueLeaks: return .trueLeak
      case .neverReleased: return .neverReleased
      }
    }

    /// The command-line option, without dashes: `max-leaked`.
    public var optionName: String {
      switch self {
      case .leaked: return "max-leaked"
      case .stuck: return "max-stuck"
      case .trueLeaks: return "max-true-leaks"
      case .neverReleased: return "max-never-released"
      }
    }

    /// What one counted unit is, in the singular and plural: "leaked object".
    public var noun: (singular: String, plural: String) {
      switch self {
      case .leaked: return ("leaked object", "leaked objects")
      case .stuck: return ("stuck object", "stuck objects")
      case .trueLeaks: return ("true leak", "true leaks")
      case .neverReleased: return ("never-released object", "never-released objects")
      }
    }

    /// `count` with the right noun: "1 leaked object", "3 true leaks".
    public func counted(_ count: Int) -> String {
      "\(count) \(count == 1 ? noun.singular : noun.plural)"
    }
  }

  /// The limits; `nil` means unlimited.
  public var limits: [Threshold: Int]

  /// The most leak groups of the program a whole-process census may find
  /// (`--max-process-leaks`, ``ProcessLeakResult``): 0 by default, and only judged when the
  /// log holds a census.
  public var maxProcessLeaks: Int? = 0

  /// The most program types that may grow at every checkpoint of a label
  /// (`--max-growing-types`, ``GrowingTypesResult``): 0 by default, judged only when a label
  /// has enough censuses.
  public var maxGrowingTypes: Int? = 0

  /// The most library leak groups a census may find (`--max-library-leaks`,
  /// ``LibraryLeakResult``): not judged by default (`nil`).
  public var maxLibraryLeaks: Int? = nil

  /// The documented defaults: 0 leaked, 0 stuck, 0 true leaks, never-released unlimited.
  public init(
    maxLeaked: Int? = 0, maxStuck: Int? = 0, maxTrueLeaks: Int? = 0, maxNeverReleased: Int? = nil
  ) {
    limits = [:]
    limits[.leaked] = maxLeaked
    limits[.stuck] = maxStuck
    limits[.trueLeaks] = maxTrueLeaks
    limits[.neverReleased] = maxNeverReleased
  }

  /// The limit of `threshold`, `nil` when unlimited.
  public subscript(threshold: Threshold) -> Int? {
    get { limits[threshold] }
    set { limits[threshold] = newValue }
  }
}
