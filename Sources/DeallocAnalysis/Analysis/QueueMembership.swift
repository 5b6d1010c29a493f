/// The log contract's test for a false leak: was the object waiting in its queue at a given
/// `t`? One rule, shared by the analyzer, `explain` and the Perfetto exporter, so that the three
/// never disagree on a verdict.
///
/// The object counts as waiting from its enqueue's `t`, inclusive, to its release's `t`,
/// exclusive. Why these ends, for records with the same nanosecond:
/// - **Enqueue, inclusive.** A check can carry the same `t` as an enqueue when the clock is
///   coarser than the two calls (one thread hands the object over, then checks it). The
///   enqueue returned before the check ran, so the queue held the object: a delayed dealloc.
/// - **Release, exclusive.** The recorder reads the release's `t` after the queue dropped its
///   reference, so at that `t` the queue no longer held the object.
///
/// Only times decide, never the order of lines: the recorder takes `t` before it takes its
/// buffer lock, so records of different threads can reach the file slightly out of time order.
enum QueueMembership {
  /// Whether an object enqueued at `enqueuedAt` and released at `releasedAt` (`nil`: not
  /// released, as far as the log goes) was in its queue at `t`.
  static func wasWaiting(at t: Int64, enqueuedAt: Int64, releasedAt: Int64?) -> Bool {
    guard enqueuedAt <= t else { return false }
    guard let releasedAt else { return true }
    return t < releasedAt
  }
}
