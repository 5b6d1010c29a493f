import DeallocLog

/// The sentences a tired engineer reads: one per check verdict and one per finding.
///
/// Kept in the library, not in a renderer, so that text, Markdown, HTML, JUnit and GitHub
/// annotations all say the same thing.
enum Explanations {
  typealias T = TimeFormatting

  /// `neverEnqueued`: for a check matched with no object, the session certainly never
  /// enqueued its address, and the check has no id. Otherwise an object may have been there
  /// and left its queue before the analyzer's look-back, and the sentence claims no more than
  /// the log shows. `callerName`: the short name of `facts.enqueuedBy` when the caller keeps
  /// it (once per stack), else it is worked out here.
  ///
  /// The sentence is appended piece by piece as UTF-8 (``SentenceBuilder``): a report lists
  /// up to a thousand checks, and joining interpolated parts with `+` cost a dozen
  /// allocations per sentence.
  static func check(
    _ verdict: CheckVerdict.Verdict, _ check: CheckRecord, _ facts: ObjectFacts?,
    sessionEnd: Int64, ended: Bool, neverEnqueued: Bool = true, callerName: String? = nil
  ) -> String {
    var text = SentenceBuilder()
    text.append(check.label.isEmpty ? "A leak check" : check.label)
    text.append(" saw ")
    text.append(check.type)
    text.append(" alive at ")
    text.append(T.format(check.time))
    text.append(".")
    guard let facts else {
      text.append(
        neverEnqueued
          ? " It was not waiting in any queue (it was never handed to one): a real leak."
          : " It was not waiting in any queue at that moment: a real leak.")
      return text.sentence
    }
    let by = enqueuedBy(facts, callerName: callerName)
    switch verdict {
    case .falseLeak: falseLeak(check, facts, by: by, sessionEnd: sessionEnd, into: &text)
    case .trueLeak: trueLeak(check, facts, by: by, into: &text)
    }
    return text.sentence
  }

  /// " It was waiting in queue 'Q', enqueued T earlier{by}": how both verdicts on a check
  /// of a queued object begin.
  private static func appendWaiting(
    _ check: CheckRecord, _ facts: ObjectFacts, by: String, into text: inout SentenceBuilder
  ) {
    text.append(" It was waiting in queue '")
    text.append(facts.queue)
    text.append("', enqueued ")
    text.append(T.format(check.time - facts.enqueuedAt))
    text.append(" earlier")
    text.append(by)
  }

  /// Why a check that saw a queued object was early: where the object waited, and what the
  /// queue did with it afterwards.
  private static func falseLeak(
    _ check: CheckRecord, _ facts: ObjectFacts, by: String, sessionEnd: Int64,
    into text: inout SentenceBuilder
  ) {
    appendWaiting(check, facts, by: by, into: &text)
    text.append(".")
    guard let releasedAt = facts.releasedAt else {
      neverReleased(facts, sessionEnd: sessionEnd, into: &text)
      return
    }
    text.append(" The queue released it at ")
    text.append(T.format(releasedAt))
    text.append(" (+")
    text.append(T.format(releasedAt - check.time))
    text.append(")")
    // A false leak's release freed it (``ObjectLifecycle/isDelayedDealloc(at:)``).
    text.append(" and it was freed. Not a leak: a delayed dealloc.")
  }

  /// Why a check that saw its object waiting in a queue is a real leak all the same: the
  /// queue's release did not free it.
  private static func heldPastRelease(
    _ check: CheckRecord, _ facts: ObjectFacts, releasedAt: Int64, by: String,
    into text: inout SentenceBuilder
  ) {
    appendWaiting(check, facts, by: by, into: &text)
    text.append(", but when the queue released it at ")
    text.append(T.format(releasedAt))
    text.append(" something else still held it")
    appendRetainCount(facts, to: &text)
    if let deallocAt = facts.deallocAt {
      text.append(" until ")
      text.append(T.format(deallocAt))
    }
    text.append(": a real leak, not a delayed dealloc.")
  }

  /// What became of a checked object the queue never released, by its state at the end.
  private static func neverReleased(
    _ facts: ObjectFacts, sessionEnd: Int64, into text: inout SentenceBuilder
  ) {
    switch facts.state {
    case .neverReleased?:
      text.append(" The queue never released it before the session ended at ")
      text.append(T.format(sessionEnd))
      text.append(". Not a leak at the check, but the queue held it to the end.")
    case .stuck?:
      text.append(" The queue had still not released it at the last record (")
      text.append(T.format(sessionEnd))
      text.append("): the queue looks stuck.")
    default:
      text.append(" It was still waiting at the last record (")
      text.append(T.format(sessionEnd))
      text.append("). Not a leak: a delayed dealloc.")
    }
  }

  /// Why a check that matched an enqueued object saw a real leak: the object had left its
  /// queue (freed, so what was alive was another object, or still held), or not yet reached it.
  private static func trueLeak(
    _ check: CheckRecord, _ facts: ObjectFacts, by: String, into text: inout SentenceBuilder
  ) {
    if let releasedAt = facts.releasedAt, releasedAt > check.time, facts.freedByRelease == false,
      facts.enqueuedAt <= check.time
    {
      heldPastRelease(check, facts, releasedAt: releasedAt, by: by, into: &text)
      return
    }
    if let releasedAt = facts.releasedAt, releasedAt <= check.time, facts.freedByRelease == true {
      text.append(" It was not in a queue at that moment: the object it matched (id ")
      text.append(String(facts.id))
      text.append(", enqueued")
      text.append(by)
      text.append(" at ")
      text.append(T.format(facts.enqueuedAt))
      text.append(") had left queue '")
      text.append(facts.queue)
      text.append("' at ")
      text.append(T.format(releasedAt))
      text.append(" and that release freed it, so what the check saw alive was another object:")
      text.append(" a real leak.")
      return
    }
    if let releasedAt = facts.releasedAt, releasedAt <= check.time {
      text.append(" The queue '")
      text.append(facts.queue)
      text.append("' had already released it at ")
      text.append(T.format(releasedAt))
      text.append(" (enqueued")
      text.append(by)
      text.append(" at ")
      text.append(T.format(facts.enqueuedAt))
      text.append("), but something else still held it")
      appendRetainCount(facts, to: &text)
      text.append(": a real leak.")
      return
    }
    text.append(" It was not in a queue at that moment (queue '")
    text.append(facts.queue)
    text.append("' received it at ")
    text.append(T.format(facts.enqueuedAt))
    text.append(by)
    text.append("): a real leak at the time of the check.")
  }

  private static func enqueuedBy(_ facts: ObjectFacts, callerName: String?) -> String {
    guard let frame = facts.enqueuedBy else { return "" }
    return " by " + (callerName ?? frame.shortName)
  }

  private static func appendRetainCount(_ facts: ObjectFacts, to text: inout SentenceBuilder) {
    guard let count = facts.retainCountAfterRelease else { return }
    text.append(" (retain count ")
    text.append(String(count))
    text.append(")")
  }

  /// Built as ``check(_:_:_:sessionEnd:ended:neverEnqueued:callerName:)`` builds its
  /// sentence, piece by piece: a report explains every finding at its end.
  /// " A leak check ('label') also saw it alive after its release: …": the checks a leaked
  /// finding took in, which are no true-leak finding of their own (one bug, one finding).
  private static func appendChecks(of finding: Finding, into text: inout SentenceBuilder) {
    guard finding.checks > 0 else { return }
    let label = finding.examples.lazy.compactMap(\.checkLabel).first
    if finding.checks == 1 {
      text.append(" A leak check")
    } else {
      text.append(" ")
      text.append(String(finding.checks))
      text.append(" leak checks")
    }
    if let label {
      text.append(finding.checks == 1 ? " ('" : " (the first: '")
      text.append(label)
      text.append("')")
    }
    text.append(" also saw ")
    text.append(finding.count == 1 ? "it" : "them")
    text.append(" alive after the release: the same leak, counted here and not as a true leak.")
  }

  static func finding(_ finding: Finding, firstCheck: CheckVerdict?) -> String {
    var text = FindingSentence(finding)
    switch finding.kind {
    case .leaked: text.leaked()
    case .trueLeak: text.trueLeak(firstCheck: firstCheck)
    case .stuck: text.stuck()
    case .neverReleased: text.neverReleased()
    }
    return text.builder.sentence
  }

  /// The sentence of one finding, by its kind, with the pieces every kind shares.
  private struct FindingSentence {
    let finding: Finding
    var builder = SentenceBuilder()
    // The first example's fields are read in place: `examples.first` copied the whole example.
    private var hasExample: Bool { !finding.examples.isEmpty }
    private var one: Bool { finding.count == 1 }

    init(_ finding: Finding) { self.finding = finding }

    mutating func leaked() {
      subject()
      builder.append(one ? " was released by " : " were released by ")
      queue()
      builder.append(" but stayed alive to the end of the session")
      if hasExample, let count = finding.examples[0].retainCount {
        builder.append(" (retain count ")
        builder.append(String(count))
        builder.append(" after the release)")
      }
      builder.append(": something else still holds ")
      builder.append(one ? "it. A real leak." : "them. A real leak.")
      Explanations.appendChecks(of: finding, into: &builder)
    }

    mutating func trueLeak(firstCheck: CheckVerdict?) {
      if let explanation = firstCheck?.explanation {
        builder.append(explanation)
      } else {
        objects()
        builder.append(" seen alive by a leak check: a real leak.")
      }
      if !one {
        builder.append(" (")
        builder.append(String(finding.count))
        builder.append(" checks with this signature; the first:)")
      }
    }

    mutating func stuck() {
      subject()
      builder.append(" waited in ")
      queue()
      builder.append(" longer than the stuck threshold (the oldest for ")
      builder.append(T.format(finding.examples.compactMap(\.age).max() ?? 0))
      builder.append(") and the session did not end: the queue stalled, or the process was")
      builder.append(" killed before it drained.")
    }

    mutating func neverReleased() {
      subject()
      builder.append(one ? " was still in " : " were still in ")
      queue()
      builder.append(" when the session ended: the process exited before the queue released ")
      builder.append(one ? "it" : "them")
      builder.append(", so the queue held that memory to the end.")
    }

    /// "N Type objects".
    private mutating func objects() {
      builder.append(String(finding.count))
      builder.append(" ")
      builder.append(finding.signature.type)
      builder.append(one ? " object" : " objects")
    }

    /// "N Type objects enqueued by Caller", the subject of every sentence but a check's; the
    /// caller named as every output names a frame (demangled).
    private mutating func subject() {
      objects()
      if let caller = finding.signature.frames.first {
        builder.append(" enqueued by ")
        builder.append(FrameNaming.shortName(caller))
      }
    }

    private mutating func queue() {
      guard hasExample, let queue = finding.examples[0].queue else {
        return builder.append("a queue")
      }
      builder.append("queue '")
      builder.append(queue)
      builder.append("'")
    }
  }
}

/// One sentence's UTF-8 bytes, appended piece by piece and made a `String` once.
///
/// Why not `String +=`: each append of a `String` is an opaque call into the runtime that
/// costs as much as copying a short sentence, and a sentence has a dozen pieces.
struct SentenceBuilder {
  private var bytes: [UInt8] = []

  init() { bytes.reserveCapacity(320) }

  mutating func append(_ piece: String) {
    var piece = piece
    piece.withUTF8 { bytes.append(contentsOf: $0) }
  }

  var sentence: String { String(decoding: bytes, as: UTF8.self) }
}
