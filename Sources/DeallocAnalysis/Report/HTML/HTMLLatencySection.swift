import DeallocLog

/// The enqueue → release latency: a histogram on a log time axis with p50, p90 and p99 drawn
/// on it, and the percentiles of both latencies in a small table.
enum HTMLLatencySection {
  static let width = 960.0
  static let left = 60.0
  static let right = 16.0
  static let top = 22.0
  static let plotHeight = 170.0
  static let height = 232.0

  static func render(_ report: Report, into html: inout HTMLBuffer) {
    let distribution = report.latency.enqueueToRelease
    html.element("section", [("id", "latency")]) { section in
      section.element("h2", text: "Enqueue → release latency")
      guard let stats = distribution.stats else {
        section.element("p", [("class", "muted")], text: "No object was released.")
        return
      }
      section.element(
        "p", [("class", "muted")],
        text: "How long \(HTMLFormat.plural(stats.count, "released object")) waited in "
          + "their queue. Bins are 1-2-5 steps on a log scale"
          + (distribution.isExact ? "." : "; counts are grouped at about 3 % resolution."))
      section.element("div", [("class", "panel")]) { panel in
        histogram(LatencyBins(distribution), stats: stats, into: &panel)
      }
      table(report, into: &section)
    }
  }

  /// Where the histogram's bars go: one slot per bin across the plot, counts scaled up from
  /// the baseline.
  private struct Layout {
    var bars: [LatencyBins.Bin]
    var slot: Double
    var highest: Int
    var y: LinearScale
    var baseline: Double

    init(_ bars: [LatencyBins.Bin]) {
      typealias L = HTMLLatencySection
      self.bars = bars
      slot = (L.width - L.left - L.right) / Double(bars.count)
      highest = bars.map(\.count).max() ?? 1
      y = LinearScale(
        domain: 0...Double(max(highest, 1)), range: L.top...(L.top + L.plotHeight), flipped: true)
      baseline = L.top + L.plotHeight
    }
  }

  static func histogram(_ bins: LatencyBins, stats: LatencyStats, into html: inout HTMLBuffer) {
    let bars = bins.bins
    guard !bars.isEmpty else { return }
    let layout = Layout(bars)
    html.open(
      "svg",
      [
        ("xmlns", "http://www.w3.org/2000/svg"), ("class", "chart histogram"),
        ("viewBox", "0 0 \(SVGNumber.format(width)) \(SVGNumber.format(height))"),
        ("width", SVGNumber.format(width)), ("height", SVGNumber.format(height)),
        ("role", "img"), ("aria-label", "Histogram of enqueue to release latency"),
      ])
    html.element("title", text: "Enqueue to release latency, \(stats.count) objects")
    axes(layout, into: &html)
    barsPlot(layout, into: &html)
    percentiles(stats, layout, into: &html)
    html.close("svg")
  }

  /// The count grid and labels, the baseline, and about a dozen bin edges on the time axis.
  private static func axes(_ layout: Layout, into html: inout HTMLBuffer) {
    let bars = layout.bars
    html.element("g", [("class", "axes")]) { g in
      for tick in layout.y.ticks(count: min(4, layout.highest)).filter({ $0 == $0.rounded() }) {
        let py = SVGNumber.format(layout.y.position(tick))
        g.void(
          "line",
          [
            ("class", "grid"), ("x1", SVGNumber.format(left)),
            ("x2", SVGNumber.format(width - right)), ("y1", py), ("y2", py),
          ])
        g.element(
          "text",
          [("x", SVGNumber.format(left - 6)), ("y", py), ("text-anchor", "end"), ("dy", "0.35em")],
          text: HTMLFormat.count(Int(tick)))
      }
      g.void(
        "line",
        [
          ("class", "axis"), ("x1", SVGNumber.format(left)),
          ("x2", SVGNumber.format(width - right)), ("y1", SVGNumber.format(layout.baseline)),
          ("y2", SVGNumber.format(layout.baseline)),
        ])
      let every = max(1, Int((Double(bars.count) / 12).rounded(.up)))
      for index in 0...bars.count where index % every == 0 || index == bars.count {
        let edge = index < bars.count ? bars[index].lower : bars[bars.count - 1].upper
        g.xAxisTick(
          at: left + Double(index) * layout.slot, baseline: layout.baseline,
          label: TimeFormatting.format(edge))
      }
      g.element(
        "text",
        [
          ("x", SVGNumber.format(left - 6)), ("y", SVGNumber.format(top - 10)),
          ("text-anchor", "end"),
        ],
        text: "objects")
    }
  }

  /// One bar per bin that holds an object, its range and count in its tooltip.
  private static func barsPlot(_ layout: Layout, into html: inout HTMLBuffer) {
    html.element("g", [("class", "plot")]) { g in
      for (index, bin) in layout.bars.enumerated() where bin.count > 0 {
        let barTop = layout.y.position(Double(bin.count))
        g.element(
          "rect",
          [
            ("class", "hist-bar"), ("data-count", String(bin.count)),
            ("x", SVGNumber.format(left + Double(index) * layout.slot + 1)),
            ("y", SVGNumber.format(barTop)), ("width", SVGNumber.format(max(1, layout.slot - 2))),
            ("height", SVGNumber.format(max(1, layout.baseline - barTop))),
          ]
        ) { rect in
          rect.element(
            "title",
            text: "\(TimeFormatting.format(bin.lower)) to \(TimeFormatting.format(bin.upper)): "
              + HTMLFormat.plural(bin.count, "object"))
        }
      }
    }
  }

  /// p50, p90 and p99 as vertical lines inside their bins, labels pushed right so that two
  /// close percentiles do not overlap.
  private static func percentiles(
    _ stats: LatencyStats, _ layout: Layout, into html: inout HTMLBuffer
  ) {
    let bars = layout.bars
    html.element("g", [("class", "percentiles")]) { g in
      var lastLabel = -Double.infinity
      for (name, value) in [("p50", stats.p50), ("p90", stats.p90), ("p99", stats.p99)] {
        guard let index = bars.firstIndex(where: { value < $0.upper }) else { continue }
        let fraction = LatencyBins.fraction(of: value, inBin: bars[index])
        let px = left + (Double(index) + fraction) * layout.slot
        g.element(
          "line",
          [
            ("class", "pct"), ("data-percentile", name), ("x1", SVGNumber.format(px)),
            ("x2", SVGNumber.format(px)), ("y1", SVGNumber.format(top)),
            ("y2", SVGNumber.format(layout.baseline)),
          ]
        ) { line in
          line.element("title", text: "\(name): \(TimeFormatting.format(value))")
        }
        let labelX = max(px + 3, lastLabel + 4)
        g.element(
          "text",
          [
            ("class", "pct-label"), ("x", SVGNumber.format(labelX)),
            ("y", SVGNumber.format(top - 6)),
          ], text: "\(name) \(TimeFormatting.format(value))")
        lastLabel = labelX + 90
      }
    }
  }

  private static func table(_ report: Report, into html: inout HTMLBuffer) {
    let rows: [(String, LatencyStats?)] = [
      ("enqueue → release", report.latency.enqueueToRelease.stats),
      ("release → dealloc (late objects)", report.latency.releaseToDealloc.stats),
    ]
    // Its own scroll box, as every table has: a wide table never widens the page.
    html.element("div", [("class", "table-wrap")]) { wrap in
      wrap.element("table", [("class", "latency")]) { table in
        table.element("thead") { head in
          head.element("tr") { row in
            row.element("th", text: "latency")
            for name in ["count", "min", "p50", "p90", "p99", "max", "mean"] {
              row.element("th", [("class", "num")], text: name)
            }
          }
        }
        table.element("tbody") { body in
          for (name, stats) in rows {
            body.element("tr") { row in
              row.element("td", text: name)
              guard let stats else {
                row.element("td", [("class", "num muted"), ("colspan", "7")], text: "none")
                return
              }
              row.element("td", [("class", "num")], text: HTMLFormat.count(stats.count))
              for value in [stats.min, stats.p50, stats.p90, stats.p99, stats.max, stats.mean] {
                row.element("td", [("class", "num")], text: TimeFormatting.format(value))
              }
            }
          }
        }
      }
    }
  }
}
