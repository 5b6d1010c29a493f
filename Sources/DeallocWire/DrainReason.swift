/// Why a queue releases a batch: the `drain` record's `why`.
package enum DrainReason: String, Sendable {
  /// The queue's delay after its first entry elapsed.
  case timer
  /// Someone called `drain()`.
  case explicit
  /// The batch reached the queue's `maxPending` and was drained at once.
  case bound
}
