import DeallocLog

/// One SVG chart per queue per session: the queue's depth over time, the session's marks as
/// dashed lines, and under it one lane per checked object, where a band is the time the
/// object waited in the queue and a marker is the check. A false leak's marker sits inside its
/// band; a true leak's does not.
enum HTMLTimelineSection {
  static func render(_ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer) {
    let charts = plannedCharts(report)
    guard !charts.isEmpty else { return }
    html.element("section", [("id", "timeline")]) { section in
      section.element("h2", text: "Queue depth over time")
      section.element(
        "p", [("class", "muted")],
        text: "Each chart is one queue in one session. Dashed lines are marks. Each lane under "
          + "a chart is a checked object: the band is the time it waited in the queue (dashed "
          + "when it was never released), the marker is the check. A false leak's marker sits "
          + "inside its band: the object was only waiting to be released.")
      section.element("div", [("class", "legend")]) { legend in
        legend.element("span", [("class", "l-depth")], text: "queue depth")
        legend.element("span", [("class", "l-band")], text: "object waiting in the queue")
        legend.element("span", [("class", "l-false")], text: "check: false leak")
        legend.element("span", [("class", "l-true")], text: "check: true leak")
        legend.element("span", [("class", "l-mark")], text: "mark")
      }
      for chart in charts.prefix(limits.charts) {
        section.element("div", [("class", "panel")]) { panel in
          panel.element("h3") { title in
            title.text("Session \(chart.session.index + 1), queue ")
            title.element("code", text: chart.timeline?.queue ?? "(none)")
          }
          if let timeline = chart.timeline {
            panel.element(
              "p", [("class", "muted")],
              text:
                "\(HTMLFormat.plural(timeline.enqueued, "object")) enqueued, "
                + "\(HTMLFormat.plural(timeline.drains, "drain"))"
                + (timeline.boundDrains > 0
                  ? " (\(HTMLFormat.count(timeline.boundDrains)) at its bound)" : "")
                + ", peak depth "
                + "\(HTMLFormat.count(timeline.peakDepth)) at \(TimeFormatting.format(timeline.peakTime))."
            )
          }
          QueueTimelineChart(
            session: chart.session, timeline: chart.timeline, checks: chart.checks,
            limits: limits
          ).render(into: &panel)
        }
      }
      HTMLFormat.writeOmitted(
        shown: min(limits.charts, charts.count), total: charts.count, "queue timelines",
        into: &section)
      let listedChecks = report.checks.count
      let allAlive = report.summary.falseLeaks + report.summary.trueLeaks
      if allAlive > listedChecks {
        section.element(
          "p", [("class", "note omitted")],
          text: "The analysis kept \(HTMLFormat.count(listedChecks)) of "
            + "\(HTMLFormat.count(allAlive)) checks that saw their object alive; the rest are "
            + "counted above but not drawn.")
      }
    }
  }

  struct PlannedChart {
    var session: SessionReport
    var timeline: QueueTimeline?
    var checks: [CheckVerdict]
  }

  /// The charts to draw, in session and queue order, with the checks each one shows: a
  /// check goes to its object's queue, or to the session's first queue when the object was
  /// never enqueued. A session with checks or marks but no queue gets a chart without depth.
  static func plannedCharts(_ report: Report) -> [PlannedChart] {
    var checksBySession: [Int: [CheckVerdict]] = [:]
    for check in report.checks { checksBySession[check.session, default: []].append(check) }
    var charts: [PlannedChart] = []
    for session in report.sessions {
      let checks = checksBySession[session.index] ?? []
      guard let first = session.queues.first else {
        if !checks.isEmpty || !session.marks.isEmpty {
          charts.append(PlannedChart(session: session, timeline: nil, checks: checks))
        }
        continue
      }
      let queueNames = Set(session.queues.map(\.queue))
      for timeline in session.queues {
        let mine = checks.filter { check in
          if let queue = check.object?.queue, queueNames.contains(queue) {
            return queue == timeline.queue
          }
          return timeline.queue == first.queue
        }
        charts.append(PlannedChart(session: session, timeline: timeline, checks: mine))
      }
    }
    return charts
  }
}
