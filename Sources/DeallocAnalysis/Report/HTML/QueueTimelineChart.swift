import DeallocLog

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
    let lanes = Array(checks.sorted { $0.check.time < $1.check.time }.prefix(limits.lanesPerChart))
    let lanesTop = C.top + C.plotHeight + C.axisHeight + (lanes.isEmpty ? 0 : 6)
    let height = lanesTop + Double(lanes.count) * C.laneHeight + 6
    let end = max(session.lastTime, 1)
    let x = LinearScale(
      domain: 0...Double(end), range: C.left...(C.width - C.right))
    let peak = max(timeline?.peakDepth ?? 0, 1)
    let y = LinearScale(
      domain: 0...Double(peak), range: C.top...(C.top + C.plotHeight), flipped: true)
    openSVG(height: height, into: &html)
    axes(x: x, y: y, peak: peak, into: &html)
    depth(x: x, y: y, end: end, into: &html)
    marks(x: x, bottom: lanesTop + Double(lanes.count) * C.laneHeight, into: &html)
    checkLanes(lanes, top: lanesTop, x: x, end: end, into: &html)
    if checks.count > lanes.count {
      html.element(
        "text", [("x", SVGNumber.format(C.left)), ("y", SVGNumber.format(height - 1))],
        text: "\(checks.count - lanes.count) more checks on this queue not drawn")
    }
    html.close("svg")
    omittedNote(drawnLanes: lanes.count, into: &html)
  }

  /// Opens the chart's `svg` element, with its size and a title naming the queue.
  private func openSVG(height: Double, into html: inout HTMLBuffer) {
    typealias C = QueueTimelineChart
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
  }

  /// The plot area and, when the chart has a queue, its depth as a filled step line.
  private func depth(x: LinearScale, y: LinearScale, end: Int64, into html: inout HTMLBuffer) {
    typealias C = QueueTimelineChart
    html.element("g", [("class", "plot")]) { plot in
      plot.void(
        "rect",
        [
          ("class", "frame"), ("x", SVGNumber.format(C.left)), ("y", SVGNumber.format(C.top)),
          ("width", SVGNumber.format(C.width - C.left - C.right)),
          ("height", SVGNumber.format(C.plotHeight)), ("fill", "none"), ("stroke", "none"),
        ])
      guard let timeline else { return }
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

  /// The note under the chart when it left checks or marks out.
  private func omittedNote(drawnLanes: Int, into html: inout HTMLBuffer) {
    let allMarks = session.marks.count + session.omittedMarks
    let drawnMarks = min(session.marks.count, limits.marksPerChart)
    guard checks.count > drawnLanes || allMarks > drawnMarks else { return }
    var parts: [String] = []
    if checks.count > drawnLanes {
      parts.append("\(drawnLanes) of \(checks.count) checks drawn")
    }
    if allMarks > drawnMarks { parts.append("\(drawnMarks) of \(allMarks) marks drawn") }
    html.element("p", [("class", "note omitted")], text: parts.joined(separator: "; ") + ".")
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
        let px = x.position(Double(mark.time))
        g.element(
          "line",
          [
            ("class", "mark-line"), ("x1", SVGNumber.format(px)), ("x2", SVGNumber.format(px)),
            ("y1", SVGNumber.format(C.top - 4)), ("y2", SVGNumber.format(bottom)),
          ]
        ) { line in
          line.element("title", text: "mark \(mark.label) at \(TimeFormatting.format(mark.time))")
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
        let centre = top + Double(index) * C.laneHeight + C.laneHeight / 2
        checkLane(verdict, lane: String(index), centre: centre, x: x, end: end, into: &g)
      }
    }
  }

  /// One checked object's lane: a guide from the plot down to the lane, the band of time the
  /// object waited in its queue, the check's marker, and a label placed where it fits.
  private func checkLane(
    _ verdict: CheckVerdict, lane: String, centre: Double, x: LinearScale, end: Int64,
    into g: inout HTMLBuffer
  ) {
    typealias C = QueueTimelineChart
    let kind = verdict.verdict == .falseLeak ? "false-leak" : "true-leak"
    let checkX = x.position(Double(verdict.check.time))
    g.void(
      "line",
      [
        ("class", "check-guide \(kind)"), ("x1", SVGNumber.format(checkX)),
        ("x2", SVGNumber.format(checkX)), ("y1", SVGNumber.format(C.top)),
        ("y2", SVGNumber.format(centre)),
      ])
    var span = (start: checkX, end: checkX)
    // Free room between the band and a check drawn outside it, for the label.
    var gap: (start: Double, end: Double)?
    if let object = verdict.object {
      let band = Self.band(object, lane: lane, centre: centre, x: x, end: end, into: &g)
      span = (min(span.start, band.start), max(span.end, band.end))
      if checkX > band.end {
        gap = (band.end, checkX)
      } else if checkX < band.start {
        gap = (checkX, band.start)
      }
    }
    Self.marker(verdict, kind: kind, lane: lane, x: checkX, centre: centre, into: &g)
    let fullLabel =
      verdict.check.type + (verdict.check.label.isEmpty ? "" : " · " + verdict.check.label)
    let place = Self.labelPlace(
      span: span, gap: gap, wanted: Double(min(fullLabel.count, 70)) * 6.2)
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

  /// Draws the band from the object's enqueue to its release (open to the session's end when
  /// it was never released), and returns where it starts and ends.
  private static func band(
    _ object: ObjectFacts, lane: String, centre: Double, x: LinearScale, end: Int64,
    into g: inout HTMLBuffer
  ) -> (start: Double, end: Double) {
    let released = object.releasedAt
    let bandStart = x.position(Double(object.enqueuedAt))
    let bandEnd = max(x.position(Double(released ?? end)), bandStart + 1)
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
    return (bandStart, bandEnd)
  }

  /// The check's marker: a diamond for a false leak, a circle for a true leak.
  private static func marker(
    _ verdict: CheckVerdict, kind: String, lane: String, x checkX: Double, centre: Double,
    into g: inout HTMLBuffer
  ) {
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
          + "\(TimeFormatting.format(verdict.check.time)). \(verdict.explanation)")
    }
  }

  /// Where a lane's label goes: right of everything drawn on the lane, else left of it, else
  /// between the band and the check; when none is `wanted` wide, the widest.
  private static func labelPlace(
    span: (start: Double, end: Double), gap: (start: Double, end: Double)?, wanted: Double
  ) -> (x: Double, anchor: String, room: Double) {
    typealias C = QueueTimelineChart
    var places: [(x: Double, anchor: String, room: Double)] = [
      (span.end + 10, "start", C.width - C.right - span.end - 10),
      (span.start - 10, "end", span.start - 10 - C.left),
    ]
    if let gap {
      places.append((gap.start + 10, "start", gap.end - gap.start - 20))
    }
    return places.first { $0.room >= wanted } ?? places.max { $0.room < $1.room }!
  }

  /// `text` cut to `limit` characters with an ellipsis (the full text is in the title).
  static func shortened(_ text: String, _ limit: Int) -> String {
    text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
  }
}
