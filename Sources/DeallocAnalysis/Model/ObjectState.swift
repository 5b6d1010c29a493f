/// The state every enqueued object ends in, exactly as the log contract defines it.
///
/// Closed: the log contract (v1) defines these states; another state is another log version.
public enum ObjectState: String, Sendable, CaseIterable, Codable, Comparable {
  /// Released with `freed: true`.
  case freed
  /// Released with `freed: false`, and deallocated later in its session.
  case late
  /// Released with `freed: false`, and never deallocated in its session: someone else holds it.
  case leaked
  /// Not released, session without `end`, younger than the stuck threshold.
  case pending
  /// Not released, session without `end`, older than the stuck threshold.
  case stuck
  /// Not released, and its session ended cleanly.
  case neverReleased

  public static func < (lhs: ObjectState, rhs: ObjectState) -> Bool { lhs.index < rhs.index }

  /// The position in ``allCases``.
  var index: Int {
    switch self {
    case .freed: return 0
    case .late: return 1
    case .leaked: return 2
    case .pending: return 3
    case .stuck: return 4
    case .neverReleased: return 5
    }
  }
}
