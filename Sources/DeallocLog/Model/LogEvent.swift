/// Where a record came from: the input's display name and its 1-based line.
public struct LogLocation: Sendable, Hashable, CustomStringConvertible {
  /// The path as the user named it, or `<stdin>`.
  public var file: String
  public var line: Int

  public init(file: String, line: Int) {
    self.file = file
    self.line = line
  }

  public var description: String { "\(file):\(line)" }
}

/// What a ``LogReader`` hands a ``LogVisitor``: session boundaries and the records between.
///
/// The reader resolves session boundaries (a new `session` record or the end of a file ends
/// the current session) so that every visitor sees `sessionBegan`, records, `sessionEnded`,
/// in that order, for every session of every input.
///
/// Closed: a stream of sessions has these three events; new kinds of records arrive as
/// ``record(_:)``.
///
/// The session boundaries are `indirect` (boxed): they are rare, and inline they made every
/// event as large as a session's ending, which each record's move to the analyzer copied.
public enum LogEvent: Sendable {
  indirect case sessionBegan(SessionInfo)
  /// Any known record but `session`. Unknown kinds are counted, not delivered.
  case record(LogRecord)
  indirect case sessionEnded(SessionEnding)
}

/// A session as its `session` record introduced it.
public struct SessionInfo: Sendable, Equatable {
  /// 0-based, across all inputs in reading order.
  public var index: Int
  public var file: String
  /// The line of the `session` record.
  public var line: Int
  public var record: SessionRecord

  public init(index: Int, file: String, line: Int, record: SessionRecord) {
    self.index = index
    self.file = file
    self.line = line
    self.record = record
  }
}

/// How a session ended: cleanly (`end` record) or not, and what the reader skipped in it.
public struct SessionEnding: Sendable, Equatable {
  public var index: Int
  /// The latest time of any record in the session.
  public var lastTime: Int64
  /// The `end` record, when the session closed cleanly.
  public var end: EndRecord?
  /// The last line of the input was cut short inside this session.
  public var truncated: Bool
  /// Records of kinds this reader does not know, by kind.
  public var unknownKinds: [String: Int]
  /// Lines that were skipped because they could not be read.
  public var malformedLines: Int
  /// Records of the session that were delivered.
  public var records: Int
  /// The last line that belonged to the session.
  public var lastLine: Int
  /// The `cut` record, when the log reached its size limit in this session.
  public var cut: CutRecord?

  public init(
    index: Int, lastTime: Int64, end: EndRecord?, truncated: Bool, unknownKinds: [String: Int],
    malformedLines: Int, records: Int, lastLine: Int, cut: CutRecord? = nil
  ) {
    self.cut = cut
    self.index = index
    self.lastTime = lastTime
    self.end = end
    self.truncated = truncated
    self.unknownKinds = unknownKinds
    self.malformedLines = malformedLines
    self.records = records
    self.lastLine = lastLine
  }
}

/// A consumer of a log stream: the analyzer, `explain`, exporters.
///
/// Implementation requirements: a visitor must keep only what it needs (memory must not grow
/// with the log's size), and must not assume that a record it refers to exists: logs can be
/// cut short or contain records the recorder never should have written. Report such
/// inconsistencies through the `warnings` sink rather than trapping.
public protocol LogVisitor {
  /// Receives one event. Throwing stops the reading (for example when an exporter's output
  /// fails); the error is rethrown by ``LogReader/read(_:into:)``.
  ///
  /// `consuming`: the reader makes each event for one visit, so a visitor that keeps or
  /// forwards it (``PipelinedVisitor`` hands it to another thread) moves it instead of
  /// copying it; a visitor declared with a plain parameter still conforms.
  mutating func visit(_ event: consuming LogEvent, at location: LogLocation) throws(AnalysisError)
  /// Receives an enqueue record: what ``visit(_:at:)`` receives as `.record(.enqueue(record))`,
  /// which the default implementation passes it.
  ///
  /// Why a requirement of its own: enqueues and releases are nearly every record of a log,
  /// and wrapped in an event each one was copied, switched on and destroyed as a record of
  /// any kind at every step from the reader to the analyzer. A visitor that implements it
  /// does exactly what its `visit` does with the wrapped record.
  mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
    throws(AnalysisError)
  /// Receives a release record: see ``visitEnqueue(_:at:)``.
  mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation)
    throws(AnalysisError)
  /// Receives a problem the reader found in the input (malformed line, cut-off tail…).
  mutating func warn(_ warning: LogWarning)
}

extension LogVisitor {
  public mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    try visit(.record(.enqueue(record)), at: location)
  }

  public mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation)
    throws(AnalysisError)
  {
    try visit(.record(.release(record)), at: location)
  }
}
