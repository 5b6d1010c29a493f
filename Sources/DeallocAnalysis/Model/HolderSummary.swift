/// What a report knows about holder scanning across its sessions: whether the recorder
/// scanned for holders at all, and how many scans its caps skipped. It decides the report's
/// one hint (``HolderHint``): how to turn holders on, or why some findings have no path.
public struct HolderSummary: Sendable, Equatable {
  /// Sessions recorded with holders on (`session` has `"holders":true`).
  public var recordedSessions = 0
  /// Sessions recorded with holders off.
  public var sessionsWithout = 0
  /// Scans made, from the `end` records (`holder_scans`).
  public var scans = 0
  /// Scans skipped by the recorder's caps, from the `end` records (`holder_scans_skipped`).
  public var skippedScans = 0

  public init() {}

  /// Whether any session was recorded with holders on.
  public var recorded: Bool { recordedSessions > 0 }
}
