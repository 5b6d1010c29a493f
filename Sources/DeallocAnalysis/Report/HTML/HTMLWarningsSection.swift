/// Problems in the input that did not stop the report (malformed or cut-off lines…).
enum HTMLWarningsSection {
  static func render(_ report: Report, limits: HTMLRenderer.Limits, into html: inout HTMLBuffer) {
    let total = report.warnings.count + report.omittedWarnings
    guard total > 0 else { return }
    html.element("section", [("id", "warnings")]) { section in
      section.element("h2", text: "Input warnings")
      section.element("ul", [("class", "mono")]) { list in
        for warning in report.warnings.prefix(limits.warnings) {
          list.element("li", text: warning.description)
        }
      }
      HTMLFormat.writeOmitted(
        shown: min(limits.warnings, report.warnings.count), total: total, "warnings",
        into: &section)
    }
  }
}
