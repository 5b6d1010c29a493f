import DeallocLog

/// Every leak check that saw its object alive, with its verdict and the explanation.
enum HTMLChecksSection {
  static func render(_ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer) {
    guard !report.checks.isEmpty else { return }
    html.element("section", [("id", "checks")]) { section in
      section.element("h2", text: "Checks that saw their object alive")
      section.element("div", [("class", "table-wrap")]) { wrap in
        wrap.element("table", [("class", "checks sortable")]) { table in
          table.element("thead") { head in
            head.element("tr") { row in
              row.element("th", text: "verdict")
              row.element("th", text: "type")
              row.element("th", text: "check")
              row.element("th", [("class", "num")], text: "at")
              row.element("th", text: "explanation")
            }
          }
          table.element("tbody") { body in
            for verdict in report.checks.prefix(limits.checks) {
              body.element("tr", [("class", verdict.verdict.rawValue)]) { row in
                row.element("td") { cell in
                  cell.element(
                    "span", [("class", "badge k-\(verdict.verdict.rawValue)")],
                    text: verdict.verdict == .falseLeak ? "false leak" : "true leak")
                }
                row.element("td") { $0.element("code", text: verdict.check.type) }
                row.element("td") { cell in
                  cell.element("code", text: verdict.check.label)
                  cell.element(
                    "div", [("class", "muted")],
                    text: "session \(verdict.session + 1), \(verdict.location)")
                }
                row.element(
                  "td", [("class", "num"), ("data-v", String(verdict.check.time))],
                  text: TimeFormatting.format(verdict.check.time))
                row.element("td", text: verdict.explanation)
              }
            }
          }
        }
      }
      HTMLFormat.writeOmitted(
        shown: min(limits.checks, report.checks.count),
        total: report.summary.falseLeaks + report.summary.trueLeaks, "checks", into: &section)
    }
  }
}
