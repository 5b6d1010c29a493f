/// The text report's per-type table, one aligned row per type; empty when no object was
/// enqueued.
enum TextTypeTableSection {
  /// The column headings after `type`: the enqueued count, each state, then the checks.
  private static let columns = [
    "enqueued", "freed", "late", "leaked", "pending", "stuck", "never", "false", "true",
  ]

  static func lines(_ report: Report, maximum: Int) -> [String] {
    typealias S = RenderingSupport
    guard !report.types.isEmpty else { return [] }
    let shown = Array(report.types.prefix(maximum))
    let width = max(4, min(60, shown.map(\.type.count).max() ?? 4))
    var out = [
      "Types",
      "  \(S.pad("type", width))" + columns.map { " " + S.padLeft($0, 8) }.joined(),
    ]
    for row in shown {
      let values =
        [row.enqueued] + ObjectState.allCases.map { row[$0] } + [row.falseLeaks, row.trueLeaks]
      out.append(
        "  \(S.pad(row.type, width))" + values.map { " " + S.padLeft(String($0), 8) }.joined())
    }
    if report.types.count > maximum {
      out.append("  … \(report.types.count - maximum) more types")
    }
    return out
  }
}
