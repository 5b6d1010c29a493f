/// What the log has said so far about one enqueued object's life, and the state that follows.
///
/// Why one type: the release facts (when, whether the release freed the object, the retain
/// count it left) and the state they settle are what a check's explanation, `explain` and the
/// report's counts must agree on, so they are set and read here only. The trade-off: it is
/// kept per object only where an object is followed in detail (a kept check's facts, an
/// `explain` history); the analyzer's and the Perfetto exporter's per-object tables keep their
/// compact layout and call the transitions themselves (`ObjectLifecycle+Transitions.swift`),
/// which take the facts as arguments.
struct ObjectLifecycle: Sendable, Equatable {
  var enqueuedAt: Int64
  var releasedAt: Int64?
  /// Whether the release freed the object (`nil` before the release).
  var freedByRelease: Bool?
  var retainCountAfterRelease: Int?
  var deallocAt: Int64?

  init(
    enqueuedAt: Int64, releasedAt: Int64? = nil, freedByRelease: Bool? = nil,
    retainCountAfterRelease: Int? = nil, deallocAt: Int64? = nil
  ) {
    self.enqueuedAt = enqueuedAt
    self.releasedAt = releasedAt
    self.freedByRelease = freedByRelease
    self.retainCountAfterRelease = retainCountAfterRelease
    self.deallocAt = deallocAt
  }

  /// The queue released the object at `t`; `freed`: the release freed it.
  mutating func recordRelease(at t: Int64, freed: Bool, retainCount: Int?) {
    releasedAt = t
    freedByRelease = freed
    retainCountAfterRelease = retainCount
  }

  /// The object, which survived its release, was deallocated at `t`.
  mutating func recordDealloc(at t: Int64) {
    deallocAt = t
  }

  /// The state the object is in for good before its session ends: late once deallocated, freed
  /// once its release freed it; `nil` while its session may still change it.
  var settledState: ObjectState? {
    if deallocAt != nil { return Self.stateAfterDealloc }
    guard let freedByRelease else { return nil }
    return Self.release(freed: freedByRelease).settledState
  }

  /// Released, not freed, not deallocated yet: the session's end makes it leaked.
  var isSurvivor: Bool {
    guard let freedByRelease, deallocAt == nil else { return false }
    return Self.release(freed: freedByRelease) == .survivor
  }

  /// The state the object ends its session in.
  func state(at end: EndOfSession) -> ObjectState {
    settledState
      ?? end.state(ofOpenObjectEnqueuedAt: enqueuedAt, released: releasedAt != nil)
  }

  /// Whether a check at `t` that saw the object alive is a false leak (a delayed dealloc)
  /// (``isDelayedDealloc(checkAt:enqueuedAt:releasedAt:freedByRelease:)``).
  func isDelayedDealloc(at t: Int64) -> Bool {
    Self.isDelayedDealloc(
      checkAt: t, enqueuedAt: enqueuedAt, releasedAt: releasedAt, freedByRelease: freedByRelease)
  }

  /// The verdict on a check at `t` that saw the object alive.
  func verdict(ofCheckAt t: Int64) -> CheckVerdict.Verdict {
    Self.verdict(delayedDealloc: isDelayedDealloc(at: t))
  }

  /// Whether the object was waiting in its queue at `t` (``QueueMembership``).
  func wasWaiting(at t: Int64) -> Bool {
    QueueMembership.wasWaiting(at: t, enqueuedAt: enqueuedAt, releasedAt: releasedAt)
  }
}
