import DeallocAnalysis
import DeallocLog

/// An independent reading of a log, kept apart from the `Analyzer` so the tests can check
/// the analyser's verdicts against a second derivation of the same contract.
///
/// It keeps one small entry per enqueued id, which is fine for the test logs (a million
/// objects is a few tens of megabytes), not for the tool.
struct LogTally: LogVisitor {
  struct Object {
    var t: Int64
    var tid: Int64?
    var releases = 0
    var freed = false
    var deallocated = false
  }

  struct Mark {
    var label: String
    var t: Int64
    /// Enqueues from the session's main thread (tid == pid) before this mark.
    var mainThreadEnqueuesBefore: Int
    /// Releases, and explicit drains, the main thread recorded before this mark.
    var mainThreadReleasesBefore: Int
    var mainThreadExplicitDrainsBefore: Int
  }

  var sessions: [SessionRecord] = []
  var endings: [SessionEnding] = []
  var warnings: [LogWarning] = []
  var objects: [UInt64: Object] = [:]
  var marks: [Mark] = []
  var threadIDs: Set<Int64> = []
  var enqueueCount = 0
  var duplicateEnqueues = 0
  var releasesOfUnknownIDs = 0
  var deallocsOfUnknownIDs = 0
  var lastTime: Int64 = 0
  private var mainThreadEnqueues = 0
  private var mainThreadReleases = 0
  private var mainThreadExplicitDrains = 0

  /// Reads `path` with the project's `LogReader`.
  static func read(_ path: String) throws -> LogTally {
    var tally = LogTally()
    var reader = LogReader()
    try reader.read(LogInput(path: path), into: &tally)
    return tally
  }

  /// Reads `path` once into both a tally and the project's `Analyzer` (a big log is read
  /// once, not twice).
  static func readWithReport(_ path: String) throws -> (LogTally, Report) {
    var both = TallyAndAnalyzer()
    var reader = LogReader()
    try reader.read(LogInput(path: path), into: &both)
    return (both.tally, both.analyzer.finish(inputs: [path]))
  }

  mutating func warn(_ warning: LogWarning) {
    warnings.append(warning)
  }

  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info):
      sessions.append(info.record)
    case .sessionEnded(let ending):
      endings.append(ending)
    case .record(let record):
      if let t = record.time { lastTime = max(lastTime, t) }
      tally(record)
    }
  }

  private mutating func tally(_ record: LogRecord) {
    switch record {
    case .enqueue(let enqueue):
      enqueueCount += 1
      if let tid = enqueue.tid { threadIDs.insert(tid) }
      if enqueue.tid == sessions.last?.pid { mainThreadEnqueues += 1 }
      if objects[enqueue.id] != nil { duplicateEnqueues += 1 }
      objects[enqueue.id] = Object(t: enqueue.time, tid: enqueue.tid)
    case .release(let release):
      if let tid = release.tid { threadIDs.insert(tid) }
      if release.tid == sessions.last?.pid { mainThreadReleases += 1 }
      guard objects[release.id] != nil else {
        releasesOfUnknownIDs += 1
        return
      }
      objects[release.id]!.releases += 1
      objects[release.id]!.freed = release.freed
    case .dealloc(let dealloc):
      guard objects[dealloc.id] != nil else {
        deallocsOfUnknownIDs += 1
        return
      }
      objects[dealloc.id]!.deallocated = true
    case .mark(let mark):
      if let tid = mark.tid { threadIDs.insert(tid) }
      marks.append(
        Mark(
          label: mark.label, t: mark.time, mainThreadEnqueuesBefore: mainThreadEnqueues,
          mainThreadReleasesBefore: mainThreadReleases,
          mainThreadExplicitDrainsBefore: mainThreadExplicitDrains))
    case .drain(let drain):
      if let tid = drain.tid { threadIDs.insert(tid) }
      if drain.tid == sessions.last?.pid && drain.reason == "explicit" {
        mainThreadExplicitDrains += 1
      }
    case .thread(let thread):
      threadIDs.insert(thread.tid)
    case .check(let check):
      _ = check
    case .session, .stack, .end, .cut, .holders, .unknown:
      break
    }
  }

  /// The states of the contract's table, derived here for a log of one session.
  func expectedSummary(stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) -> Summary {
    var summary = Summary()
    summary.sessions = sessions.count
    summary.enqueued = objects.count
    let ended = endings.last?.end != nil
    for object in objects.values {
      if object.releases > 0 {
        if object.freed {
          summary.freed += 1
        } else if object.deallocated {
          summary.late += 1
        } else {
          summary.leaked += 1
        }
      } else if ended {
        summary.neverReleased += 1
      } else if lastTime - object.t > stuckAfter {
        summary.stuck += 1
      } else {
        summary.pending += 1
      }
    }
    return summary
  }

  /// Warnings other than the one a killed writer may leave: a cut-off last line.
  var warningsOtherThanTruncation: [LogWarning] {
    warnings.filter { $0.kind != .truncatedLine }
  }
}

/// Hands every event to a tally and to an analyzer.
private struct TallyAndAnalyzer: LogVisitor {
  var tally = LogTally()
  var analyzer = Analyzer()

  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    try tally.visit(event, at: location)
    try analyzer.visit(event, at: location)
  }

  mutating func warn(_ warning: LogWarning) {
    tally.warn(warning)
    analyzer.warn(warning)
  }
}
