import DeallocLog

/// The reader's warnings as a consumer keeps them: the first `limit`, and a count of the
/// rest, so that a log of nothing but bad lines cannot grow memory.
struct CappedWarnings: Sendable {
  let limit: Int
  private(set) var kept: [LogWarning] = []
  private(set) var omitted = 0

  init(limit: Int) {
    self.limit = limit
  }

  mutating func add(_ warning: LogWarning) {
    if kept.count < limit {
      kept.append(warning)
    } else {
      omitted += 1
    }
  }
}
