import DeallocLog

/// How a session's records ran out, which decides the state of every object it left open.
///
/// Why one type: the analyzer, `explain` and the Perfetto exporter each name the state of an
/// object never released; with the rule written once here they cannot disagree on it.
struct EndOfSession: Sendable {
  /// The largest `t` of the session: an open object's age is measured up to it.
  var lastTime: Int64
  /// The session closed with its `end` record.
  var ended: Bool
  /// An object never released, in a session without `end`, is stuck when older than this.
  var stuckAfter: Int64

  init(lastTime: Int64, ended: Bool, stuckAfter: Int64) {
    self.lastTime = lastTime
    self.ended = ended
    self.stuckAfter = stuckAfter
  }

  init(_ ending: SessionEnding, stuckAfter: Int64) {
    self.init(lastTime: ending.lastTime, ended: ending.end != nil, stuckAfter: stuckAfter)
  }

  /// The state of an object the session left open (never released, or never deallocated
  /// after surviving its release), enqueued at `enqueuedAt`:
  /// - a survivor of its release is leaked: someone else still holds it;
  /// - an object never released is never released when the session closed cleanly (nothing
  ///   more can come), else pending or stuck by its age (the log may have been read before
  ///   the program was done).
  func state(ofOpenObjectEnqueuedAt enqueuedAt: Int64, released: Bool) -> ObjectState {
    if released { return .leaked }
    if ended { return .neverReleased }
    return lastTime - enqueuedAt > stuckAfter ? .stuck : .pending
  }
}
