import DeallocLog

extension LeakFinding {
  /// One line that names the leak, for a failure's title: the type and the one thing most
  /// worth knowing about why it lives, `leaked: Shop.Cart, held by a retain cycle through
  /// onChange`. The holder path when a scan found one (a cycle's fields, a global), else what
  /// the queues know. The whole story stays in `description`.
  public var title: String {
    "leaked: \(typeName), " + (holderSummary ?? stateSummary)
  }

  private var holderSummary: String? {
    guard let path = holders?.paths.first else { return nil }
    switch path.root.kind {
    case .cycle:
      let fields = path.steps.compactMap { step -> String? in
        if case .field(let name) = step.edge { return name }
        if case .captures = step.edge { return "a closure's captures" }
        return nil
      }
      return "held by a retain cycle"
        + (fields.isEmpty ? "" : " through " + fields.joined(separator: ", "))
    case .global:
      return "held by the global " + (path.root.symbol ?? "of an unknown symbol")
    default:
      return nil
    }
  }

  private var stateSummary: String {
    switch state.cause {
    case .survivedRelease, .survivedEarlierRelease:
      "alive after "
        + (state.queues.first.map { "DeallocQueue \"\($0)\"" } ?? "its DeallocQueue")
        + " released it"
    case .notQueued:
      "still alive at the end of \(label)"
    }
  }
}

/// What a Swift Testing issue for a leak records as its error, so that the issue's title
/// names the leak (Swift Testing titles an issue with only a comment "Issue recorded"); the
/// details go in the issue's comment.
struct LeakIssueTitle: Error, CustomStringConvertible {
  let description: String
}
