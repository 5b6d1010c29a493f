/// The knobs of an analysis.
public struct AnalysisOptions: Sendable, Equatable {
  /// The default stuck threshold: one second, ten times the shared queue's default delay.
  public static let defaultStuckAfter: Int64 = 1_000_000_000

  /// An unreleased object older than this (at its session's last record, in a session with
  /// no `end`) is stuck rather than pending.
  public var stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter
  /// Checks with a verdict kept in ``Report/checks``; all are counted.
  public var maximumListedChecks = 1000
  /// Marks kept, across all sessions of the report (each session counts the rest in
  /// ``SessionReport/omittedMarks``).
  public var maximumListedMarks = 1000
  /// Sessions listed in ``Report/sessions``; the rest are counted in the summary and in
  /// ``Report/omittedSessions``, so that a directory of many thousand logs costs bounded memory.
  public var maximumListedSessions = 1000
  /// Queue timelines (one per queue per session) that keep their depth series; later ones keep
  /// their counts and peak only.
  public var maximumDetailedTimelines = 64
  /// Thread names kept, across all sessions of the report.
  public var maximumThreadNames = 4096
  /// Members kept per finding.
  public var maximumExamples = 5
  /// Warnings kept; the rest are counted in ``Report/omittedWarnings``.
  public var maximumWarnings = 200
  /// Modules the user names as libraries (`--library GLOB`): a census group whose every
  /// named type comes from one of them, or from the toolchain, is a library leak.
  public var libraryModules: [Glob] = []
  /// The most (stack, type) pairs whose origin ids ending a session keeps in an array
  /// (4 MiB); beyond, it looks origins up in dictionaries. The report is the same either way;
  /// tests move it to run both paths.
  var originTableLimit = 1 << 20

  public init(stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) {
    self.stuckAfter = stuckAfter
  }
}
