// TEMPORARY (holders-ana): a stub of the in-process holders API of /work/plan/holders-spec.md,
// so that DeallocTesting builds before holders-rec lands. The integrator deletes this file
// when merging `holders-rec`, whose DeallocTrace implements these two members for real.

extension DeallocTrace {
  /// The HOLDERS-VALUE JSON for `object`, or nil when holders are off (or refused).
  /// Stub: holders are always off.
  package static func holdersJSON(of object: AnyObject) -> String? { nil }

  /// Whether holder scanning is on in this process. Stub: always off.
  public static var holdersEnabled: Bool { false }
}
