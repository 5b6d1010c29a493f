import DeallocLog

/// The sentences a tired engineer reads: one per check verdict and one per finding.
///
/// Kept in the library, not in a renderer, so that text, Markdown, HTML, JUnit and GitHub
/// annotations all say the same thing.
enum Explanations {
  typealias T = TimeFormatting

  /// `neverEnqueued`: for a check matched with no object, the session certainly never
  /// enqueued its address, and the check has no id. Otherwise an object may have been there and left its queue
  /// before the analyzer's look-back, and the sentence claims no more than the log shows.
  static func check(
    _ verdict: CheckVerdict.Verdict, _ check: CheckRecord, _ facts: ObjectFacts?,
    sessionEnd: Int64, ended: Bool, neverEnqueued: Bool = true
  ) -> String {
    let who = check.label.isEmpty ? "A leak check" : check.label
    let text = "\(who) saw \(check.type) alive at \(T.format(check.time))."
    guard let facts else {
      if neverEnqueued {
        return text + " It was not waiting in any queue (it was never handed to one): a real leak."
      }
      return text + " It was not waiting in any queue at that moment: a real leak."
    }
    switch verdict {
    case .falseLeak: return text + falseLeak(check, facts, sessionEnd: sessionEnd)
    case .trueLeak: return text + trueLeak(check, facts)
    }
  }

  /// Why a check that saw a queued object was early: where the object waited, and what the
  /// queue did with it afterwards.
  private static func falseLeak(_ check: CheckRecord, _ facts: ObjectFacts, sessionEnd: Int64)
    -> String
  {
    let waiting =
      " It was waiting in queue '\(facts.queue)', enqueued \(T.format(check.time - facts.enqueuedAt))"
      + " earlier\(enqueuedBy(facts))."
    guard let releasedAt = facts.releasedAt else {
      return waiting + neverReleased(facts, sessionEnd: sessionEnd)
    }
    let after =
      "The queue released it at \(T.format(releasedAt)) (+\(T.format(releasedAt - check.time)))"
    if facts.freedByRelease == true {
      return waiting + " \(after) and it was freed. Not a leak: a delayed dealloc."
    }
    if let deallocAt = facts.deallocAt {
      return waiting
        + " \(after); something else still held it\(rc(facts)), and it was freed at"
        + " \(T.format(deallocAt)). Not a leak: a delayed dealloc."
    }
    return waiting
      + " \(after), but something else still holds it\(rc(facts)): the check was early,"
      + " yet the object leaked anyway (see the leaked findings)."
  }

  /// What became of a checked object the queue never released, by its state at the end.
  private static func neverReleased(_ facts: ObjectFacts, sessionEnd: Int64) -> String {
    switch facts.state {
    case .neverReleased?:
      return " The queue never released it before the session ended at \(T.format(sessionEnd))."
        + " Not a leak at the check, but the queue held it to the end."
    case .stuck?:
      return " The queue had still not released it at the last record (\(T.format(sessionEnd))):"
        + " the queue looks stuck."
    default:
      return " It was still waiting at the last record (\(T.format(sessionEnd)))."
        + " Not a leak: a delayed dealloc."
    }
  }

  /// Why a check that matched an enqueued object saw a real leak: the object had left its
  /// queue (freed, so what was alive was another object, or still held), or not yet reached it.
  private static func trueLeak(_ check: CheckRecord, _ facts: ObjectFacts) -> String {
    let by = enqueuedBy(facts)
    if let releasedAt = facts.releasedAt, releasedAt <= check.time, facts.freedByRelease == true {
      return " It was not in a queue at that moment: the object it matched (id \(facts.id),"
        + " enqueued\(by) at \(T.format(facts.enqueuedAt))) had left queue '\(facts.queue)'"
        + " at \(T.format(releasedAt)) and that release freed it, so what the check saw alive"
        + " was another object: a real leak."
    }
    if let releasedAt = facts.releasedAt, releasedAt <= check.time {
      return " The queue '\(facts.queue)' had already released it at \(T.format(releasedAt))"
        + " (enqueued\(by) at \(T.format(facts.enqueuedAt))), but something else still held"
        + " it\(rc(facts)): a real leak."
    }
    return " It was not in a queue at that moment (queue '\(facts.queue)' received it at"
      + " \(T.format(facts.enqueuedAt))\(by)): a real leak at the time of the check."
  }

  private static func enqueuedBy(_ facts: ObjectFacts) -> String {
    facts.enqueuedBy.map { " by \($0.shortName)" } ?? ""
  }

  private static func rc(_ facts: ObjectFacts) -> String {
    facts.retainCountAfterRelease.map { " (retain count \($0))" } ?? ""
  }

  static func finding(_ finding: Finding, firstCheck: CheckVerdict?) -> String {
    let first = finding.examples.first
    let n = finding.count
    let objects =
      n == 1 ? "1 \(finding.signature.type) object" : "\(n) \(finding.signature.type) objects"
    let by = finding.signature.frames.first.map { " enqueued by \($0.shortName)" } ?? ""
    let queue = first?.queue.map { "queue '\($0)'" } ?? "a queue"
    switch finding.kind {
    case .leaked:
      let rc = first?.retainCount.map { " (retain count \($0) after the release)" } ?? ""
      return
        "\(objects)\(by) \(n == 1 ? "was" : "were") released by \(queue) but stayed alive"
        + " to the end of the session\(rc): something else still holds \(n == 1 ? "it" : "them")."
        + " A real leak."
    case .trueLeak:
      let checks = n == 1 ? "" : " (\(n) checks with this signature; the first:)"
      return (firstCheck?.explanation ?? "\(objects) seen alive by a leak check: a real leak.")
        + checks
    case .stuck:
      let oldest = finding.examples.compactMap(\.age).max() ?? 0
      return
        "\(objects)\(by) waited in \(queue) longer than the stuck threshold"
        + " (the oldest for \(T.format(oldest))) and the session did not end: the queue stalled, or"
        + " the process was killed before it drained."
    case .neverReleased:
      return
        "\(objects)\(by) \(n == 1 ? "was" : "were") still in \(queue) when the session"
        + " ended: the process exited before the queue released \(n == 1 ? "it" : "them"),"
        + " so the queue held that memory to the end."
    }
  }
}
