/// The transitions of an enqueued object's life, each written once: the analyzer (on its
/// compact per-object tables), the Perfetto exporter and `explain` (through
/// ``ObjectLifecycle``) call these and decide nothing themselves.
///
/// - release → ``ReleaseOutcome/freed`` (final) or ``ReleaseOutcome/survivor``;
/// - dealloc of a survivor → ``ObjectState/late`` (final);
/// - end of the session → leaked, stuck, pending or never released
///   (``EndOfSession/state(ofOpenObjectEnqueuedAt:released:)``);
/// - an alive check → a false leak or a true leak (``isDelayedDealloc(checkAt:enqueuedAt:releasedAt:freedByRelease:)``).
///
/// Static functions of the facts, not methods of a stored model: the tables keep their own
/// layout, and the hot paths (a release per object) pay for no copy.
extension ObjectLifecycle {
  /// Where a release leaves an object.
  enum ReleaseOutcome: Sendable, Equatable {
    /// The release freed it: ``ObjectState/freed``, for good.
    case freed
    /// Something else still held it: its dealloc makes it late, the session's end leaked.
    case survivor

    /// The state the outcome settles, `nil` for a survivor.
    var settledState: ObjectState? {
      switch self {
      case .freed: return .freed
      case .survivor: return nil
      }
    }
  }

  /// Transition release: the queue's release freed the object (`freed: true`) or left a
  /// survivor.
  @inline(__always)
  static func release(freed: Bool) -> ReleaseOutcome {
    freed ? .freed : .survivor
  }

  /// Transition dealloc: a survivor of its release that is deallocated in its session is late.
  static var stateAfterDealloc: ObjectState { .late }

  /// Whether a check at `t` that saw the object alive is a false leak (a delayed dealloc):
  /// the object was waiting in its queue then, and the queue's release, once read, freed it.
  ///
  /// A release that left the object alive (something else held it) makes the check a true
  /// leak, even when the object was freed later: the check saw an object its queue could
  /// not free. Before the release is read (`freedByRelease` `nil`) the check counts as a
  /// false leak, and the release turns it (``CheckLedger``).
  static func isDelayedDealloc(
    checkAt t: Int64, enqueuedAt: Int64, releasedAt: Int64?, freedByRelease: Bool?
  ) -> Bool {
    guard QueueMembership.wasWaiting(at: t, enqueuedAt: enqueuedAt, releasedAt: releasedAt)
    else { return false }
    guard let freedByRelease else { return true }
    return release(freed: freedByRelease) == .freed
  }

  /// The verdict on an alive check of an object, or of no object the log followed (`nil`:
  /// it was in no queue, a true leak).
  static func verdict(ofCheckAt t: Int64, of object: ObjectLifecycle?) -> CheckVerdict.Verdict {
    verdict(delayedDealloc: object?.isDelayedDealloc(at: t) ?? false)
  }

  /// A delayed dealloc is a false leak; anything else a check saw alive, a true leak.
  static func verdict(delayedDealloc: Bool) -> CheckVerdict.Verdict {
    delayedDealloc ? .falseLeak : .trueLeak
  }
}
