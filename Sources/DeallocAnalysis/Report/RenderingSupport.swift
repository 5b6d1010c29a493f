import DeallocLog

/// Helpers shared by the renderers (internal: every renderer lives in this module).
enum RenderingSupport {
  /// Blocks of lines, one blank line between two; empty blocks are left out with their blank
  /// line, so a section with nothing to say leaves no gap.
  static func separated(_ blocks: [[String]]) -> [String] {
    var out: [String] = []
    for block in blocks where !block.isEmpty {
      if !out.isEmpty { out.append("") }
      out.append(contentsOf: block)
    }
    return out
  }

  /// The program's frames a report shows of a stack before it counts the rest.
  static let framesShown = 8

  /// Frames worth showing: the enqueue stack without its leading machinery frames (queue,
  /// tracer, runtime), at most `limit`, and how many were left out at the end.
  static func callerFrames(_ stack: [Frame], limit: Int = 8) -> (frames: [Frame], omitted: Int) {
    let callers = Array(stack.drop { Signature.isMachinery($0) })
    return (Array(callers.prefix(limit)), max(0, callers.count - limit))
  }

  /// A frame as one line: its name (``FrameNaming``) and, when known, `file:line`.
  static func frameLine(_ frame: Frame) -> String {
    let name = FrameNaming.name(frame)
    if let location = frame.location { return "\(name) at \(location)" }
    return name
  }

  /// "1 object" / "3 objects".
  /// The bugs, apart from the objects and checks the summary counts: "3 findings (bugs): 2
  /// leaked after release, 1 true leak". Every format's summary says it, so that a count of
  /// objects or checks is never read as a count of bugs.
  static func findingsSentence(_ report: Report) -> String {
    var byKind: [Finding.Kind: Int] = [:]
    for finding in report.findings { byKind[finding.kind, default: 0] += 1 }
    let kinds = Finding.Kind.allCases.compactMap { kind in
      byKind[kind].map { "\($0) \(kind.title)" }
    }
    return plural(report.findings.count, "finding") + " (bugs)"
      + (kinds.isEmpty ? "" : ": " + kinds.joined(separator: ", "))
  }

  /// "8 true leaks (5 of them of leaked objects, in those objects' findings)": the checks'
  /// true leaks, saying how many are facts of a leaked finding rather than findings of their
  /// own.
  static func trueLeaksPhrase(_ summary: Summary) -> String {
    let ofLeaked = summary.trueLeaksOfLeaked
    return plural(summary.trueLeaks, "true leak")
      + (ofLeaked > 0 ? " (\(ofLeaked) of them of leaked objects, in those objects' findings)" : "")
  }

  static func plural(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : (plural ?? singular + "s"))"
  }

  /// Pads `text` on the right to `width` characters.
  static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }

  /// Pads `text` on the left to `width` characters.
  static func padLeft(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
  }

  /// The human name of a state.
  static func name(_ state: ObjectState) -> String {
    state == .neverReleased ? "never released" : state.rawValue
  }

  /// What a state means, in a few words.
  static func meaning(_ state: ObjectState) -> String {
    switch state {
    case .freed: return "released by the queue and freed"
    case .late: return "survived the release, freed later"
    case .leaked: return "survived the release, never freed"
    case .pending: return "still in a queue, within the stuck threshold"
    case .stuck: return "still in a queue, older than the stuck threshold"
    case .neverReleased: return "still in a queue when the session ended"
    }
  }

  /// How a session ended, in words.
  static func ending(_ session: SessionReport) -> String {
    var text: String
    if let end = session.end {
      text = "ended (\(end.reason)) at \(TimeFormatting.format(end.time))"
    } else {
      text = "no end record (incomplete), last record at \(TimeFormatting.format(session.lastTime))"
    }
    if session.truncated { text += ", last line cut short" }
    return text
  }

  /// The session's one-line identity.
  static func identity(_ session: SessionReport) -> String {
    var parts = ["session \(session.index + 1)"]
    if let exe = session.header.executable { parts.append(exe) }
    if let pid = session.header.pid { parts.append("pid \(pid)") }
    if let wall = session.header.wallClock { parts.append("started \(wall)") }
    return parts.joined(separator: ", ") + " (\(session.file):\(session.line))"
  }

  /// The example line of a member of `finding`: which session and, when its stack shows it
  /// and no check label names it already, which test it came from.
  static func example(_ example: FindingExample, of finding: Finding) -> String {
    typealias T = TimeFormatting
    var parts: [String] = []
    if example.checkLabel == nil, let test = finding.test(of: example) {
      parts.append("from test \(test)")
    }
    if let id = example.id { parts.append("id \(id)") }
    parts.append(example.address.description)
    if let checkedAt = example.checkedAt {
      let label = example.checkLabel.map { $0.isEmpty ? "" : " by \($0)" } ?? ""
      parts.append("checked\(label) at \(T.format(checkedAt))")
    }
    if let enqueuedAt = example.enqueuedAt { parts.append("enqueued at \(T.format(enqueuedAt))") }
    if let releasedAt = example.releasedAt { parts.append("released at \(T.format(releasedAt))") }
    if let rc = example.retainCount { parts.append("retain count \(rc)") }
    if let age = example.age { parts.append("waiting \(T.format(age))") }
    return "session \(example.session + 1): " + parts.joined(separator: ", ")
      + " (\(example.location))"
  }

  /// The holder lines of a finding (``HolderPathText``), about the first member that has a
  /// holders record; empty when none has. `allFrames` as for ``StackListing``.
  static func holderLines(_ finding: Finding, allFrames: Bool) -> [String] {
    guard let holders = finding.holders else { return [] }
    let member = finding.examples.first { $0.holders != nil }
    return HolderPathText.lines(
      holders, type: finding.signature.type, address: member?.address,
      listing: StackListing.lines(allFrames: allFrames))
  }

  // MARK: Late objects held past their release

  /// The heading of the section of late objects that have a holders record.
  static func lateHeading(_ report: Report) -> String {
    "Late deallocs: held past their release (\(report.lateHeldCount))"
  }

  /// What the section says first: late objects are freed in the end, so nothing fails.
  static let lateMeaning =
    "Freed in the end (no finding, no gate failure), but something kept them alive past"
    + " their queue's release: the holders the recorder saw right then."

  /// A late member's line: when its queue released it and how much later it was freed.
  static func lateRelease(_ example: LateHeldExample) -> String {
    typealias T = TimeFormatting
    return "released by queue '\(example.queue)' at \(T.format(example.releasedAt)),"
      + " freed \(T.format(example.deallocAt - example.releasedAt)) later (\(example.location))"
  }

  /// A group's entry: one line when it has one member (its title and its release), else its
  /// title with the count, then one line per example and how many more.
  static func lateEntry(_ group: LateHeldGroup) -> (head: String, members: [String]) {
    let title = group.signature.title
    if group.count == 1, let only = group.examples.first {
      return (title + ": " + lateRelease(only), [])
    }
    var members = group.examples.map(lateRelease)
    if group.count > group.examples.count {
      members.append("… and \(group.count - group.examples.count) more")
    }
    return ("\(title) (×\(group.count))", members)
  }

  /// The holder lines of a group (``HolderPathText``), about its first member, seen at its
  /// release.
  static func lateHolderLines(_ group: LateHeldGroup, allFrames: Bool) -> [String] {
    HolderPathText.lines(
      group.holders, type: group.signature.type, address: group.examples.first?.address,
      moment: "at its release", listing: StackListing.lines(allFrames: allFrames))
  }

  /// What a capped list of groups left out: groups kept but not shown, and late objects in
  /// groups the analysis did not keep; `nil` when nothing was.
  static func lateOmitted(_ report: Report, shown: Int) -> String? {
    let hidden = report.lateHeld.dropFirst(shown).reduce(0) { $0 + $1.count }
    let objects = hidden + report.omittedLateHeld
    guard objects > 0 else { return nil }
    return "… and \(plural(objects, "more late object")) held past their release, in groups"
      + " not listed"
  }
}
