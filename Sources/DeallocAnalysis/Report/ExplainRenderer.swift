import DeallocLog
import TextEscaping

/// The text of `dealloctrace explain`: each object's records in order, with times, the
/// verdict of each check, the timings that matter and the enqueue stack.
public struct ExplainRenderer: Sendable {
  /// Every frame of the enqueue stack as recorded, the queue's and the tracer's marked,
  /// instead of the program's first and the rest folded into one line (``StackListing``):
  /// `--all-frames`.
  public var allFrames = false

  public init() {}

  public func render(_ histories: [ObjectHistory], selector: ObjectSelector, omitted: Int) -> String
  {
    guard !histories.isEmpty else {
      return "No object matches \(selector).\n"
    }
    var out = [
      "\(RenderingSupport.plural(histories.count, "object"))"
        + " \(histories.count == 1 ? "matches" : "match") \(selector)."
    ]
    for history in histories {
      out.append("")
      out.append(contentsOf: lines(history))
    }
    if omitted > 0 {
      out.append("")
      out.append("… \(omitted) more matching objects not shown")
    }
    return out.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }

  /// One object: who it is and its state, its records in order (a holders record followed by
  /// its path), then its timings and its enqueue stack.
  private func lines(_ history: ObjectHistory) -> [String] {
    typealias S = RenderingSupport
    let id = history.id.map { "id \($0)" } ?? "no id"
    var out = [
      "\(history.type) \(id) at \(history.address), session \(history.session.index + 1)"
        + " (\(history.session.file))",
      history.state.map { "  state: \(S.name($0)) (\(S.meaning($0)))" }
        ?? "  state: never handed to a queue",
    ]
    for entry in history.entries {
      let time = entry.record.time.map { TimeFormatting.format($0) } ?? ""
      out.append("  \(S.padLeft(time, 10))  \(describe(entry, history)) [\(entry.location)]")
      if case .holders(let r) = entry.record {
        // The path under its record, as every output shows it.
        for line in HolderPathText.lines(
          r.holders, type: r.type, address: r.object,
          listing: StackListing.lines(allFrames: allFrames))
        {
          out.append(String(repeating: " ", count: 14) + line)
        }
        // The whole paired history as a timeline (DEALLOCTRACE_HISTORY).
        for line in RetainHistoryText.timelineLines(r.holders.retainHistory) {
          out.append(String(repeating: " ", count: 14) + line)
        }
      }
    }
    if history.omittedEntries > 0 {
      out.append(
        "  … \(S.plural(history.omittedEntries, "more drain or check", "more drains and checks"))"
          + " not shown")
    }
    if let timings = Self.timings(history) { out.append("  timings: " + timings) }
    if !history.stack.isEmpty {
      out.append("  enqueue stack:")
      guard allFrames else {
        let stack = StackListing(history.stack, limit: history.stack.count, allFrames: false)
        for frame in stack.frames { out.append("    \(S.frameLine(frame))") }
        for line in stack.trailingLines { out.append("    " + line) }
        return out
      }
      for frame in history.stack {
        let marker = Signature.isMachinery(frame) ? "  (queue/tracer)" : ""
        out.append("    \(S.frameLine(frame))\(marker)")
      }
    }
    return out
  }

  /// How long the object waited in its queue and lived after its release; `nil` when it was
  /// never enqueued.
  private static func timings(_ history: ObjectHistory) -> String? {
    typealias T = TimeFormatting
    guard let enqueuedAt = history.enqueuedAt else { return nil }
    guard let releasedAt = history.releasedAt else {
      return
        "in queue for \(T.format(history.sessionLastTime - enqueuedAt)) at the session's last record"
    }
    var timings = ["in queue \(T.format(releasedAt - enqueuedAt)) (enqueue → release)"]
    if let deallocAt = history.deallocAt {
      timings.append("alive \(T.format(deallocAt - releasedAt)) after the release")
    }
    return timings.joined(separator: "; ")
  }

  private func describe(_ entry: ObjectHistory.Entry, _ history: ObjectHistory) -> String {
    func thread(_ tid: Int64?) -> String {
      guard let tid else { return "" }
      if let name = history.threads[tid], !name.isEmpty { return " on thread \(tid) (\(name))" }
      return " on thread \(tid)"
    }
    switch entry.record {
    case .enqueue(let r):
      var details: [String] = []
      if let depth = r.depth { details.append("depth \(depth)") }
      if let rc = r.retainCount { details.append("retain count \(rc)") }
      let extra = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
      return "enqueue into queue '\(r.queue)'\(extra)\(thread(r.tid))"
    case .drain(let r):
      return "queue '\(r.queue)' starts draining \(r.count) object\(r.count == 1 ? "" : "s")"
        + (r.reason.map { " (\($0))" } ?? "") + thread(r.tid)
    case .release(let r):
      if r.freed { return "release by the queue: freed\(thread(r.tid))" }
      return "release by the queue: survived"
        + (r.retainCount.map { ", retain count \($0) left" } ?? "") + thread(r.tid)
    case .dealloc:
      return "dealloc observed (freed after surviving its release)"
    case .check(let r):
      let label = r.label.isEmpty ? "leak check" : "check '\(r.label)'"
      guard r.alive else { return "\(label): gone (passed)" }
      switch entry.verdict {
      case .falseLeak?:
        return "\(label): alive, while waiting in its queue: a false leak (delayed dealloc)"
      default:
        guard history.lifecycle?.wasWaiting(at: r.time) == true else {
          return "\(label): alive, not in a queue: a true leak"
        }
        return "\(label): alive, while waiting in its queue, whose release did not free it:"
          + " a true leak"
      }
    case .holders(let r):
      let when: String
      switch r.reason {
      case .release: when = "at its release"
      case .check: when = "at the check"
      case .end: when = "at the session's end"
      default: when = "(\(r.reason.rawValue))"
      }
      let scan =
        r.holders.scanMicroseconds.map { ", scan took \(TimeFormatting.format(Int64($0) * 1000))" }
        ?? ""
      return
        "who held it \(when): \(RenderingSupport.plural(r.holders.direct, "direct holder"))\(scan)"
    default:
      return "\(entry.record)"
    }
  }
}
