import DeallocAnalysis
import Foundation
import TestSupport

/// An independent reading of a log, against which the tests check the analyzer's counts: it
/// reads the wire through `ParsedLog` (the tests' one raw parser, not the product's reader)
/// and derives the states of the contract's table (docs/log-format.md) itself.
///
/// It keeps one small entry per enqueued id, which is fine for the test logs (a million
/// objects is a few tens of megabytes), not for the tool. A complete line that is not a JSON
/// object fails the calling test; what the product's reader warns about is for the tests to
/// check on its report.
struct LogTally {
  struct Object {
    var t: Int64
    var tid: Int64?
    var releases = 0
    var freed = false
    var deallocated = false
  }

  /// A `session` record, and the `end` record that closed it, if any.
  struct Session {
    var pid: Int64?
    var end: End?
  }

  struct End {
    var reason: String?
    var pending: Int?
    var lost: Int?
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

  var sessions: [Session] = []
  /// Whether the last line was cut short (a killed writer's).
  var truncatedTail = false
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

  /// Reads `path` with `ParsedLog`, one record at a time.
  static func read(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws
    -> LogTally
  {
    var tally = LogTally()
    tally.truncatedTail = try ParsedLog.forEachRecord(
      in: URL(fileURLWithPath: path), file: file, line: line
    ) { tally.tally($0) }
    return tally
  }

  private mutating func tally(_ record: [String: Any]) {
    func int(_ key: String) -> Int64? { (record[key] as? Int).map(Int64.init) }
    let id = int("id").flatMap { UInt64(exactly: $0) }
    let tid = int("tid")
    if let tid { threadIDs.insert(tid) }
    if let t = int("t") { lastTime = max(lastTime, t) }
    let byMainThread = tid != nil && tid == sessions.last?.pid
    switch record["ev"] as? String {
    case "session":
      sessions.append(Session(pid: int("pid")))
    case "end":
      guard !sessions.isEmpty else { return }
      sessions[sessions.count - 1].end = End(
        reason: record["why"] as? String, pending: record["pending"] as? Int,
        lost: record["lost"] as? Int)
    case "enqueue":
      guard let id, let t = int("t") else { return }
      enqueueCount += 1
      if byMainThread { mainThreadEnqueues += 1 }
      if objects[id] != nil { duplicateEnqueues += 1 }
      objects[id] = Object(t: t, tid: tid)
    case "release":
      if byMainThread { mainThreadReleases += 1 }
      guard let id, objects[id] != nil else {
        releasesOfUnknownIDs += 1
        return
      }
      objects[id]!.releases += 1
      objects[id]!.freed = record["freed"] as? Bool == true
    case "dealloc":
      guard let id, objects[id] != nil else {
        deallocsOfUnknownIDs += 1
        return
      }
      objects[id]!.deallocated = true
    case "mark":
      marks.append(
        Mark(
          label: record["label"] as? String ?? "", t: int("t") ?? 0,
          mainThreadEnqueuesBefore: mainThreadEnqueues,
          mainThreadReleasesBefore: mainThreadReleases,
          mainThreadExplicitDrainsBefore: mainThreadExplicitDrains))
    case "drain":
      if byMainThread && record["why"] as? String == "explicit" { mainThreadExplicitDrains += 1 }
    default:
      break
    }
  }

  /// The states of the contract's table, derived here for a log of one session.
  func expectedSummary(stuckAfter: Int64 = AnalysisOptions.defaultStuckAfter) -> Summary {
    var summary = Summary()
    summary.sessions = sessions.count
    summary.enqueued = objects.count
    let ended = sessions.last?.end != nil
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
}
