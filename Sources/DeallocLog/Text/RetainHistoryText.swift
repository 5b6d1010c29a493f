/// The text of a retain/release history (DEALLOCTRACE_HISTORY): under a finding, the retains
/// never given back, each with the program's frames; in `explain`, the whole history as a
/// timeline with each event's partner.
///
/// Why here, beside ``HolderPathText``: every text-like output shows a finding's holder lines
/// through it, so the outstanding retains read the same in each. Unescaped: each output
/// escapes for its medium.
public enum RetainHistoryText {
  /// Frames of an event's stack shown, the program's first.
  public static let framesShown = 6

  /// An event's frames from the program's first (``RetainPairing/programFrames(_:)``).
  public static func programFrames(_ frames: [Frame]) -> ArraySlice<Frame> {
    RetainPairing.programFrames(frames)
  }

  /// `never given back (…):` and each of the program's references never given back, with its
  /// frames; empty without a history. At the indentation of ``HolderPathText``'s lines.
  public static func outstandingLines(_ history: RetainHistory?) -> [String] {
    guard let history else { return [] }
    let pairing = RetainPairing(history)
    var lines = [
      "never given back (retain/release history: \(pairing.outstanding.count) of the"
        + " \(pairing.programReferences) references the program took):"
    ]
    for index in pairing.outstanding {
      let event = pairing.events[index]
      switch event.kind {
      case .unseen:
        lines.append(
          "  event \(index + 1): a reference no hook saw taken (a weak or unowned reference"
            + " loaded strong)")
      case .allocation:
        lines.append("  the allocation\(countText(event)) at:")
      default:
        lines.append("  event \(index + 1), a retain\(countText(event)), at:")
      }
      lines += programFrames(event.frames).prefix(framesShown).map { "    " + frameText($0) }
    }
    if pairing.outstanding.isEmpty {
      lines.append("  none: every reference the program took was given back")
    }
    if !pairing.recorderOutstanding.isEmpty {
      lines.append(
        "  (and \(pairing.recorderOutstanding.count) of the queue's or the tracer's, held"
          + " while it looked at the object)")
    }
    lines += capLines(history)
    return lines
  }

  /// One event of the timeline, as `explain` and the HTML report show it.
  public struct TimelineRow: Sendable, Equatable {
    /// 1-based, as the text refers to events.
    public var number: Int
    public var kind: RetainHistory.Kind
    public var countAfter: Int?
    /// What it paired with: "gives back 3", "given back by 7", "OUTSTANDING", …
    public var pairing: String
    /// Its first frame of the program's (or what no hook saw).
    public var frame: String
    /// A reference of the program's never given back.
    public var outstanding: Bool

    /// An unowned retain or release: marked so in every output.
    public var isUnowned: Bool { kind == .unownedRetain || kind == .unownedRelease }
  }

  /// The paired history, oldest event first.
  public static func timeline(_ history: RetainHistory) -> [TimelineRow] {
    let pairing = RetainPairing(history)
    let recorderOpen = Set(pairing.recorderOutstanding)
    let programOpen = Set(pairing.outstanding)
    return pairing.events.enumerated().map { index, event in
      var pairs: [String] = []
      if let taken = pairing.gaveBack[index] { pairs.append("gives back \(taken + 1)") }
      if event.kind == .release && pairing.gaveBack[index] == nil {
        pairs.append("gives back a reference taken before the history began")
      }
      if event.kind == .unownedRelease && pairing.gaveBack[index] == nil {
        pairs.append("gives back an unowned reference taken before the history began")
      }
      if event.kind == .unownedRetain {
        pairs.append(
          pairing.givenBackBy[index].map { "given back by \($0 + 1)" }
            ?? "never given back (unowned: keeps the memory, not the object)")
      }
      if event.isRetain || event.kind == .enqueue {
        if let release = pairing.givenBackBy[index] {
          pairs.append("given back by \(release + 1)")
        } else if recorderOpen.contains(index) {
          pairs.append(event.kind == .enqueue ? "held by the queue" : "held by the recorder")
        } else {
          pairs.append("OUTSTANDING")
        }
      }
      let frame =
        event.kind == .unseen
        ? "no hook saw it (a weak or unowned reference loaded strong)"
        : programFrames(event.frames).first.map(frameText) ?? "(no frames)"
      return TimelineRow(
        number: index + 1, kind: event.kind, countAfter: event.countAfter,
        pairing: pairs.joined(separator: ", "), frame: frame,
        outstanding: programOpen.contains(index))
    }
  }

  /// `retain/release history …:` and one line per event, oldest first, with what it paired
  /// with (`OUTSTANDING` for a reference of the program's never given back) and its first
  /// frame of the program's; an unowned event says so in its kind (`unowned-retain`,
  /// `unowned-release`). For `explain`.
  public static func timelineLines(_ history: RetainHistory?) -> [String] {
    guard let history else { return [] }
    let rows = timeline(history)
    var lines = ["retain/release history (\(rows.count) events, oldest first):"]
    for row in rows {
      // Padded to the strong kinds' width, never cut (`unowned-retain` is longer).
      let name = row.kind.rawValue
      let kind = name + String(repeating: " ", count: max(0, 7 - name.count))
      let count = row.countAfter.map { " (count \($0) after it)" } ?? ""
      lines.append("  \(row.number). \(kind)\(count): \(row.pairing) — \(row.frame)")
    }
    return lines + capLines(history)
  }

  /// What the recorder's cap and full tables left out, one line each (none when nothing).
  public static func capNotes(_ history: RetainHistory) -> [String] {
    capLines(history).map { String($0.dropFirst(2)) }
  }

  private static func capLines(_ history: RetainHistory) -> [String] {
    var lines: [String] = []
    if history.droppedPaired > 0 {
      lines.append(
        "  (\(history.droppedPaired) paired events were dropped by the recorder's cap per"
          + " object; the unpaired ones were all kept)")
    }
    if history.lost > 0 {
      lines.append(
        "  (\(history.lost) events of the process were not recorded: the recorder's tables"
          + " were full)")
    }
    return lines
  }

  private static func countText(_ event: RetainHistory.Event) -> String {
    event.countAfter.map { " (count \($0) after it)" } ?? ""
  }

  private static func frameText(_ frame: Frame) -> String {
    frame.displayName + (frame.location.map { " at \($0)" } ?? "")
  }
}
