import DeallocLog
import TextEscaping

/// The Markdown report's per-type table; empty when no object was enqueued.
enum MarkdownTypeTableSection {
  static func lines(_ report: Report, maximum: Int) -> [String] {
    guard !report.types.isEmpty else { return [] }
    var out = [
      "### Types",
      "",
      "| type | enqueued | freed | late | leaked | pending | stuck | never released |"
        + " false leaks | true leaks |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.types.prefix(maximum) {
      let values =
        [row.enqueued] + ObjectState.allCases.map { row[$0] } + [row.falseLeaks, row.trueLeaks]
      out.append(
        "| `\(Escaping.markdownCode(row.type))` | "
          + values.map(String.init).joined(separator: " | ") + " |")
    }
    if report.types.count > maximum {
      out.append("")
      out.append("… \(report.types.count - maximum) more types.")
    }
    return out
  }
}
