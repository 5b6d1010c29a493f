import DeallocLog
import DeallocTrace

/// The seam between leak assertions and holder scanning: who holds a surviving object, asked
/// in-process, so that a failing test names the reference to cut with no log to open.
///
/// Why it parses JSON rather than taking a model from the recorder: the recorder's
/// `holdersJSON(of:others:)` returns exactly the body of a `holders` log record, and parsing
/// it with the reader's own parser (``HolderReport/parse(json:)``) and rendering it with the
/// reports' own text (``HolderPathText``) keeps one rule in one place. The cost, one scan and one
/// parse per leaked object, is paid only by a test that is already failing.
enum HolderLookup {
  /// What the failure message can say about holders.
  enum Outcome: Sendable, Equatable {
    /// Holder scanning is off in this process.
    case off
    /// The scan's answer.
    case found(HolderReport)
    /// Scanning is on but gave no answer; the reason, in words.
    case unavailable(String)
  }

  /// Scans for who holds `object` now, when holder scanning is on; `others` strong
  /// references to it are not the caller's (see `DeallocTrace.holdersJSON(of:others:)`).
  static func look(at object: AnyObject, others: Int) -> Outcome {
    guard DeallocTrace.holdersEnabled else { return .off }
    guard let json = DeallocTrace.holdersJSON(of: object, others: others) else {
      return .unavailable("the holder scan gave no answer (holders were refused or turned off)")
    }
    return outcome(json: json)
  }

  /// The outcome of a HOLDERS-VALUE (or `null`), as `holdersJSON(of:others:)` returns it.
  static func outcome(json: String) -> Outcome {
    do {
      guard let report = try HolderReport.parse(json: json) else {
        return .unavailable(
          "the object is not in the registry of live objects (allocated before holders were"
            + " turned on from code?)")
      }
      return .found(report)
    } catch {
      return .unavailable("the holder scan's answer could not be read: \(error.description)")
    }
  }
}
