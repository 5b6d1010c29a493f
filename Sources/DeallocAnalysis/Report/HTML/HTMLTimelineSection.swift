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

/// The SVG of one queue's timeline.
struct QueueTimelineChart {
  static let width = 960.0
  static let left = 52.0
  static let right = 16.0
  /// Room above the plot for two rows of mark labels.
  static let top = 38.0
  static let plotHeight = 150.0
  static let axisHeight = 24.0
  static let laneHeight = 18.0

  var session: SessionReport
  var timeline: QueueTimeline?
  var checks: [CheckVerdict]
  var limits: HTMLRenderer.Limits

  func render(into html: inout HTMLBuffer) {
    typealias C = QueueTimelineChart
    let lanes = Array(checks.sorted { $0.check.t < $1.check.t }.prefix(limits.lanesPerChart))
    let lanesTop = C.top + C.plotHeight + C.axisHeight + (lanes.isEmpty ? 0 : 6)
    let height = lanesTop + Double(lanes.count) * C.laneHeight + 6
    let end = max(session.lastTime, 1)
    let x = LinearScale(
      domain: 0...Double(end), range: C.left...(C.width - C.right))
    let peak = max(timeline?.peakDepth ?? 0, 1)
    let y = LinearScale(
      domain: 0...Double(peak), range: C.top...(C.top + C.plotHeight), flipped: true)
    let queue = timeline?.queue ?? "(none)"
    html.open(
      "svg",
      [
        ("xmlns", "http://www.w3.org/2000/svg"), ("class", "chart timeline"),
        ("viewBox", "0 0 \(SVGNumber.format(C.width)) \(SVGNumber.format(height))"),
        ("width", SVGNumber.format(C.width)), ("height", SVGNumber.format(height)),
        ("role", "img"), ("data-session", String(session.index + 1)), ("data-queue", queue),
        ("aria-label", "Depth of queue \(queue) in session \(session.index + 1) over time"),
      ])
    html.element(
      "title",
      text: "Queue \(queue), session \(session.index + 1): depth over "
        + TimeFormatting.format(session.lastTime))
    axes(x: x, y: y, peak: peak, into: &html)
    html.element("g", [("class", "plot")]) { plot in
      plot.void(
        "rect",
        [
          ("class", "frame"), ("x", SVGNumber.format(C.left)), ("y", SVGNumber.format(C.top)),
          ("width", SVGNumber.format(C.width - C.left - C.right)),
          ("height", SVGNumber.format(C.plotHeight)), ("fill", "none"), ("stroke", "none"),
        ])
      if let timeline {
        // Each point is the deepest of its time bucket; the line must end at the depth the
        // queue really ended at, which the timeline tracks apart.
        var points = timeline.points
        if let last = points.last { points.append(DepthPoint(t: last.t, depth: timeline.depth)) }
        let steps = DepthSteps(points, scale: x)
        plot.element(
          "path",
          [
            ("class", "depth"), ("data-points", String(steps.columns.count)),
            ("d", steps.areaPath(start: x.position(0), end: x.position(Double(end)), y: y)),
          ]
        ) { path in
          path.element(
            "title",
            text: "peak depth \(timeline.peakDepth) at \(TimeFormatting.format(timeline.peakTime))"
          )
        }
      }
    }
    marks(x: x, bottom: lanesTop + Double(lanes.count) * C.laneHeight, into: &html)
    checkLanes(lanes, top: lanesTop, x: x, end: end, into: &html)
    if checks.count > lanes.count {
      html.element(
        "text", [("x", SVGNumber.format(C.left)), ("y", SVGNumber.format(height - 1))],
        text: "\(checks.count - lanes.count) more checks on this queue not drawn")
    }
    html.close("svg")
    if checks.count > lanes.count || session.marks.count > limits.marksPerChart
      || session.omittedMarks > 0
    {
      var parts: [String] = []
      if checks.count > lanes.count {
        parts.append("\(lanes.count) of \(checks.count) checks drawn")
      }
      let allMarks = session.marks.count + session.omittedMarks
      let drawnMarks = min(session.marks.count, limits.marksPerChart)
      if allMarks > drawnMarks { parts.append("\(drawnMarks) of \(allMarks) marks drawn") }
      html.element("p", [("class", "note omitted")], text: parts.joined(separator: "; ") + ".")
    }
  }

  private func axes(x: LinearScale, y: LinearScale, peak: Int, into html: inout HTMLBuffer) {
    typealias C = QueueTimelineChart
    html.element("g", [("class", "axes")]) { g in
      let depthTicks = y.ticks(count: min(4, peak)).filter { $0 == $0.rounded() }
      for tick in depthTicks {
        let py = SVGNumber.format(y.position(tick))
        g.void(
          "line",
          [
            ("class", "grid"), ("x1", SVGNumber.format(C.left)),
            ("x2", SVGNumber.format(C.width - C.right)), ("y1", py), ("y2", py),
          ])
        g.element(
          "text",
          [
            ("x", SVGNumber.format(C.left - 6)), ("y", py), ("text-anchor", "end"),
            ("dy", "0.35em"),
          ],
          text: String(Int(tick)))
      }
      let baseline = C.top + C.plotHeight
      g.void(
        "line",
        [
          ("class", "axis"), ("x1", SVGNumber.format(C.left)),
          ("x2", SVGNumber.format(C.width - C.right)), ("y1", SVGNumber.format(baseline)),
          ("y2", SVGNumber.format(baseline)),
        ])
      let timeTicks = x.ticks(count: 8)
      let step = timeTicks.count > 1 ? timeTicks[1] - timeTicks[0] : 1
      for tick in timeTicks {
        g.xAxisTick(
          at: x.position(tick), baseline: baseline,
          label: TimeAxisLabels.label(tick, step: step, maximum: timeTicks.last ?? tick))
      }
      g.element(
        "text",
        [
          ("x", SVGNumber.format(C.left - 6)), ("y", SVGNumber.format(C.top - 10)),
          ("text-anchor", "end"),
        ],
        text: "depth")
    }
  }

  private func marks(x: LinearScale, bottom: Double, into html: inout HTMLBuffer) {
    typealias C = QueueTimelineChart
    let drawn = session.marks.prefix(limits.marksPerChart)
    guard !drawn.isEmpty else { return }
    html.element("g", [("class", "marks")]) { g in
      // Labels go on the first of two rows where they do not run into the previous one;
      // a mark whose label fits on neither keeps its line and its tooltip.
      var rowEnds = [-Double.infinity, -Double.infinity]
      for mark in drawn {
        let px = x.position(Double(mark.t))
        g.element(
          "line",
          [
            ("class", "mark-line"), ("x1", SVGNumber.format(px)), ("x2", SVGNumber.format(px)),
            ("y1", SVGNumber.format(C.top - 4)), ("y2", SVGNumber.format(bottom)),
          ]
        ) { line in
          line.element("title", text: "mark \(mark.label) at \(TimeFormatting.format(mark.t))")
        }
        let label = Self.shortened(mark.label, 24)
        let labelWidth = Double(label.count) * 6.2
        let anchorEnd = px + labelWidth > C.width
        let start = anchorEnd ? px - labelWidth : px
        if let row = rowEnds.indices.first(where: { start > rowEnds[$0] + 6 }) {
          g.element(
            "text",
            [
              ("class", "mark-label"), ("x", SVGNumber.format(px + (anchorEnd ? -3 : 3))),
              ("y", SVGNumber.format(C.top - 8 - Double(row) * 13)),
              ("text-anchor", anchorEnd ? "end" : "start"),
            ], text: label)
          rowEnds[row] = start + labelWidth
        }
      }
    }
  }

  private func checkLanes(
    _ lanes: [CheckVerdict], top: Double, x: LinearScale, end: Int64,
    into html: inout HTMLBuffer
  ) {
    typealias C = QueueTimelineChart
    guard !lanes.isEmpty else { return }
    html.element("g", [("class", "checks")]) { g in
      for (index, verdict) in lanes.enumerated() {
        let kind = verdict.verdict == .falseLeak ? "false-leak" : "true-leak"
        let centre = top + Double(index) * C.laneHeight + C.laneHeight / 2
        let checkX = x.position(Double(verdict.check.t))
        let lane = String(index)
        g.void(
          "line",
          [
            ("class", "check-guide \(kind)"), ("x1", SVGNumber.format(checkX)),
            ("x2", SVGNumber.format(checkX)), ("y1", SVGNumber.format(C.top)),
            ("y2", SVGNumber.format(centre)),
          ])
        var spanStart = checkX
        var spanEnd = checkX
        // Free room between the band and a check drawn outside it, for the label.
        var gap: (start: Double, end: Double)?
        if let object = verdict.object {
          let released = object.releasedAt
          let bandStart = x.position(Double(object.enqueuedAt))
          let bandEnd = max(x.position(Double(released ?? end)), bandStart + 1)
          spanStart = min(spanStart, bandStart)
          spanEnd = max(spanEnd, bandEnd)
          if checkX > bandEnd {
            gap = (bandEnd, checkX)
          } else if checkX < bandStart {
            gap = (checkX, bandStart)
          }
          let waited =
            released.map { "released at \(TimeFormatting.format($0))" }
            ?? "never released (session ends at \(TimeFormatting.format(end)))"
          g.element(
            "rect",
            [
              ("class", released == nil ? "band open" : "band"), ("data-lane", lane),
              ("x", SVGNumber.format(bandStart)), ("y", SVGNumber.format(centre - 5)),
              ("width", SVGNumber.format(bandEnd - bandStart)), ("height", "10"), ("rx", "2"),
            ]
          ) { rect in
            rect.element(
              "title",
              text: "\(object.type) (id \(object.id), \(object.address)) in queue "
                + "\(object.queue): enqueued at \(TimeFormatting.format(object.enqueuedAt)), "
                + waited)
          }
        }
        let marker =
          verdict.verdict == .falseLeak
          ? "M\(SVGNumber.format(checkX)),\(SVGNumber.format(centre - 7))"
            + "l6,7l-6,7l-6,-7Z"
          : "M\(SVGNumber.format(checkX - 5)),\(SVGNumber.format(centre))"
            + "a5,5 0 1,0 10,0a5,5 0 1,0 -10,0Z"
        g.element(
          "path",
          [
            ("class", "check-marker \(kind)"), ("data-lane", lane),
            ("data-x", SVGNumber.format(checkX)), ("d", marker),
          ]
        ) { path in
          path.element(
            "title",
            text: "\(verdict.verdict == .falseLeak ? "false leak" : "true leak"): check "
              + "\(verdict.check.label) of \(verdict.check.type) at "
              + "\(TimeFormatting.format(verdict.check.t)). \(verdict.explanation)")
        }
        let fullLabel =
          verdict.check.type + (verdict.check.label.isEmpty ? "" : " · " + verdict.check.label)
        // Right of everything drawn on the lane, else left of it, else between the band and
        // the check; when none is wide enough, the widest, with the label shortened to fit.
        var places: [(x: Double, anchor: String, room: Double)] = [
          (spanEnd + 10, "start", C.width - C.right - spanEnd - 10),
          (spanStart - 10, "end", spanStart - 10 - C.left),
        ]
        if let gap {
          places.append((gap.start + 10, "start", gap.end - gap.start - 20))
        }
        let wanted = Double(min(fullLabel.count, 70)) * 6.2
        let place =
          places.first { $0.room >= wanted } ?? places.max { $0.room < $1.room }!
        let label = Self.shortened(fullLabel, max(8, min(70, Int(place.room / 6.2))))
        let labelAttributes: [(String, String?)] = [
          ("x", SVGNumber.format(place.x)), ("text-anchor", place.anchor),
        ]
        g.element(
          "text",
          [("class", "lane-label"), ("data-lane", lane)] + labelAttributes + [
            ("y", SVGNumber.format(centre)), ("dy", "0.35em"),
          ], text: label)
      }
    }
  }

  /// `text` cut to `limit` characters with an ellipsis (the full text is in the title).
  static func shortened(_ text: String, _ limit: Int) -> String {
    text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
  }
}
