/// The page's head: title, inputs, a one-line verdict, one card per object state and per check
/// verdict; and, apart, the sessions read.
enum HTMLSummarySection {
  static func render(_ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer) {
    let summary = report.summary
    html.element("header") { header in
      header.element("h1", text: "dealloctrace report")
      header.open("p", [("class", "muted")])
      header.text(
        HTMLFormat.plural(summary.sessions, "session") + " from "
          + HTMLFormat.plural(report.inputs.count, "input") + ": ")
      let names = report.inputs.prefix(5)
      for (index, input) in names.enumerated() {
        if index > 0 { header.text(", ") }
        header.element("code", text: input)
      }
      if report.inputs.count > names.count {
        header.text(" and \(report.inputs.count - names.count) more")
      }
      header.close("p")
      header.element("p", [("class", "verdict")], text: verdict(report))
    }

    html.element("section", [("id", "summary")]) { section in
      section.element("h2", text: "Objects by state")
      section.element("div", [("class", "cards")]) { cards in
        card(
          "enqueued", count: summary.enqueued, meaning: "handed to a queue", style: "enqueued",
          into: &cards)
        for state in ObjectState.allCases {
          card(
            RenderingSupport.name(state), count: summary[state],
            meaning: RenderingSupport.meaning(state), style: state.rawValue, into: &cards)
        }
      }
      section.element("h2", text: "Leak checks")
      section.element("div", [("class", "cards")]) { cards in
        card(
          "checks", count: summary.checks, meaning: "leak assertions recorded", style: "checks",
          into: &cards)
        card(
          "false leaks", count: summary.falseLeaks,
          meaning: "alive, but waiting in a queue: a delayed dealloc", style: "falseLeaks",
          into: &cards)
        card(
          "true leaks", count: summary.trueLeaks, meaning: "alive and in no queue",
          style: "trueLeaks", into: &cards)
      }
    }
  }

  /// One sentence: what needs attention, or that nothing does.
  static func verdict(_ report: Report) -> String {
    let summary = report.summary
    var problems: [String] = []
    if summary.leaked > 0 { problems.append("\(HTMLFormat.count(summary.leaked)) leaked") }
    if summary.trueLeaks > 0 {
      problems.append(
        HTMLFormat.plural(summary.trueLeaks, "true leak")
          + (summary.trueLeaksOfLeaked > 0
            ? " (\(HTMLFormat.count(summary.trueLeaksOfLeaked)) of them of leaked objects)" : ""))
    }
    if summary.stuck > 0 { problems.append("\(HTMLFormat.count(summary.stuck)) stuck") }
    if summary.neverReleased > 0 {
      problems.append("\(HTMLFormat.count(summary.neverReleased)) never released")
    }
    var text =
      problems.isEmpty
      ? "No leaks, stuck or never released objects."
      : "Needs attention: " + RenderingSupport.findingsSentence(report)
        + ". Objects and checks: " + problems.joined(separator: ", ") + "."
    if summary.falseLeaks > 0 {
      text +=
        " \(HTMLFormat.plural(summary.falseLeaks, "false leak")) (delayed deallocs,"
        + " explained below)."
    }
    if report.hasIncompleteSession {
      text += " Some sessions are incomplete (no end record or a cut-off last line)."
    }
    return text
  }

  private static func card(
    _ title: String, count: Int, meaning: String, style: String, into html: inout HTMLBuffer
  ) {
    let classes = "card s-\(style)" + (count == 0 ? " zero" : "")
    html.element("div", [("class", classes), ("data-count", String(count))]) { card in
      card.element("div", [("class", "n")], text: HTMLFormat.count(count))
      card.element("div", [("class", "k")], text: title)
      card.element("div", [("class", "m")], text: meaning)
    }
  }

  /// The sessions read: below the findings and charts, so that the findings open the page.
  static func renderSessions(
    _ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer
  ) {
    guard !report.sessions.isEmpty else { return }
    html.element("h2", text: "Sessions")
    // Its own scroll box: a long program path never widens the page.
    html.element("div", [("class", "table-wrap")]) { wrap in
      wrap.element("table", [("class", "sessions")]) { table in
        table.raw(
          "<thead><tr><th>session</th><th>program</th><th>how it ended</th>"
            + "<th class=\"num\">enqueued</th><th class=\"num\">peak depth</th></tr></thead>")
        table.element("tbody") { body in
          for session in report.sessions.prefix(limits.sessions) {
            body.element("tr") { row in
              row.element("td", text: "\(session.index + 1)")
              row.element("td") { cell in
                var parts: [String] = []
                if let exe = session.header.executable { parts.append(exe) }
                if let pid = session.header.pid { parts.append("pid \(pid)") }
                cell.element(
                  "code",
                  text: parts.isEmpty
                    ? "(unknown program)"
                    : parts.joined(
                      separator: ", "))
                cell.element(
                  "div", [("class", "muted")],
                  text: "\(session.file):\(session.line)"
                    + (session.header.wallClock.map { ", started \($0)" } ?? ""))
              }
              row.element("td", text: RenderingSupport.ending(session))
              row.element(
                "td", [("class", "num")], text: HTMLFormat.count(session.summary.enqueued))
              let peak = session.queues.map(\.peakDepth).max() ?? 0
              row.element("td", [("class", "num")], text: HTMLFormat.count(peak))
            }
          }
        }
      }
    }
    HTMLFormat.writeOmitted(
      shown: min(limits.sessions, report.sessions.count),
      total: report.sessions.count + report.omittedSessions, "sessions", into: &html)
  }
}
