import DeallocLog

/// Late objects held past their release, grouped: objects a queue released that survived
/// (`release` with `freed: false`), whose recorder scanned for their holders right then
/// (`holders`, `why: "release"`), and that were deallocated later in their session.
///
/// Why a section of their own, and not a finding: a late object is freed in the end, so no
/// gate fails on it; but what kept it alive past its release (a cache, a pending closure)
/// is the same question a leak raises, and the path answers it. Only late objects that have
/// a holders record are listed, so a report of a log without holders is what it was.
public struct LateHeldGroup: Sendable, Equatable {
  /// The type, the enqueue stack's signature frames and the holder path's grouping key, as
  /// for findings (``Signature/holderKey`` is always set here).
  public var signature: Signature
  /// The full enqueue stack of the group's first member (empty when unknown).
  public var stack: [Frame]
  /// Who held the group's first member at its release.
  public var holders: HolderReport
  /// How many late objects the group holds.
  public var count: Int
  /// The first few members, in log order.
  public var examples: [LateHeldExample]
}

/// One late object held past its release.
public struct LateHeldExample: Sendable, Equatable {
  public var session: Int
  public var id: UInt64
  public var address: Address
  public var type: String
  public var queue: String
  public var enqueuedAt: Int64
  public var releasedAt: Int64
  public var deallocAt: Int64
  /// The `release` record that found it alive.
  public var location: LogLocation
  /// Who held this member at its release.
  public var holders: HolderReport
}
