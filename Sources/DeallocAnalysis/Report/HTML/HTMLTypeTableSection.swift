import DeallocLog

/// Objects per type: how many were enqueued, how each ended, its checks and its latency.
/// Sortable by any column when JavaScript runs; largest first otherwise.
enum HTMLTypeTableSection {
  static func render(_ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer) {
    guard !report.types.isEmpty else { return }
    html.element("section", [("id", "types")]) { section in
      section.element("h2", text: "Per type")
      section.element("div", [("class", "table-wrap")]) { wrap in
        wrap.element("table", [("class", "types sortable")]) { table in
          table.element("thead") { head in
            head.element("tr") { row in
              row.element("th", text: "type")
              row.element("th", [("class", "num")], text: "enqueued")
              for state in ObjectState.allCases {
                row.element("th", [("class", "num")], text: RenderingSupport.name(state))
              }
              row.element("th", [("class", "num")], text: "false leaks")
              row.element("th", [("class", "num")], text: "true leaks")
              row.element("th", [("class", "num")], text: "p50 wait")
              row.element("th", [("class", "num")], text: "max wait")
            }
          }
          table.element("tbody") { body in
            for type in report.types.prefix(limits.types) {
              body.element("tr") { row in
                row.element("td") { $0.element("code", text: type.type) }
                number(type.enqueued, into: &row)
                for state in ObjectState.allCases { number(type[state], into: &row) }
                number(type.falseLeaks, into: &row)
                number(type.trueLeaks, into: &row)
                let stats = type.enqueueToRelease.stats
                for value in [stats?.p50, stats?.max] {
                  row.element(
                    "td", [("class", "num"), ("data-v", String(value ?? -1))],
                    text: value.map(TimeFormatting.format) ?? "–")
                }
              }
            }
          }
        }
      }
      HTMLFormat.writeOmitted(
        shown: min(limits.types, report.types.count), total: report.types.count, "types",
        into: &section)
    }
  }

  private static func number(_ value: Int, into html: inout HTMLBuffer) {
    html.element(
      "td", [("class", value == 0 ? "num muted" : "num"), ("data-v", String(value))],
      text: HTMLFormat.count(value))
  }
}
