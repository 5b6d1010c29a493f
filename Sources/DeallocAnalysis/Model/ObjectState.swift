/// The state every enqueued object ends in, exactly as the log contract defines it.
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

  public static func < (lhs: ObjectState, rhs: ObjectState) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }
}
