import DeallocLog

/// A finding's retain/release history (DEALLOCTRACE_HISTORY) as a table, oldest event first,
/// the references of the program's never given back marked, and the unowned events (class
/// `unowned`, and their kind): the same rows as `explain`'s timeline
/// (``RetainHistoryText/timeline(_:)``), folded under the holder path.
enum HTMLRetainHistoryTable {
  static func render(_ history: RetainHistory?, into html: inout HTMLBuffer) {
    guard let history else { return }
    let rows = RetainHistoryText.timeline(history)
    let outstanding = rows.filter(\.outstanding).count
    html.element("details", [("class", "retain-history")]) { details in
      details.element(
        "summary",
        text: "Retain/release history: \(rows.count) events, \(outstanding) never given back")
      details.element("div", [("class", "table-wrap")]) { wrap in
        wrap.element("table", [("class", "retain-history")]) { table in
          table.element("thead") { head in
            head.element("tr") { row in
              let titles = [
                "#", "event", "count after", "paired", "where (the program's first frame)",
              ]
              for title in titles { row.element("th", text: title) }
            }
          }
          table.element("tbody") { body in
            for entry in rows {
              // An outstanding row is marked by its class and in bold (the report's style
              // sheet is shared with every other section; the marker needs none of its own).
              let rowClass = entry.outstanding ? "outstanding" : entry.isUnowned ? "unowned" : nil
              body.element("tr", [("class", rowClass)]) { row in
                let cells = [
                  String(entry.number), entry.kind.rawValue,
                  entry.countAfter.map(String.init) ?? "", entry.pairing, entry.frame,
                ]
                for (column, text) in cells.enumerated() {
                  row.element("td", [("class", column == 4 ? "mono" : nil)]) { cell in
                    if entry.outstanding {
                      cell.element("strong", text: text)
                    } else {
                      cell.text(text)
                    }
                  }
                }
              }
            }
          }
        }
      }
      for note in RetainHistoryText.capNotes(history) {
        details.element("p", [("class", "note")], text: note)
      }
    }
  }
}
