import DeallocLog

/// "Leaks in the whole process": each finding of the final census a `<details>` (closed)
/// whose summary names its kind, root type and size, and whose body is its `leaks`-style
/// tree; the libraries' leaks in a `<details>` of their own, closed. Absent when the log
/// held no census, so pages without one stay byte for byte what they were.
enum HTMLProcessLeaksSection {
  static func render(
    _ report: Report, limits: HTMLRenderer.Limits, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    guard let final = report.census.final else { return }
    html.element("section", [("id", "process-leaks")]) { section in
      section.element("h2", text: "Leaks in the whole process")
      let header = CensusLeaksText.lines(
        report.census, maximumFindings: 0, allFrames: allFrames)
      for line in header.dropFirst() where !line.hasPrefix("    ") {
        section.element("p", [("class", "muted")], text: line.trimmingPrefixSpaces)
      }
      for group in final.programGroups.prefix(limits.findings) {
        render(group, allFrames: allFrames, into: &section)
      }
      let library = final.libraryGroups
      if !library.isEmpty {
        section.element("details", [("class", "library-leaks")]) { details in
          details.element("summary", text: "Library leaks (not counted by the gate)")
          details.element("ul") { list in
            for module in CensusLibraries.byModule(library) {
              list.element(
                "li",
                text: "\(module.module): \(HTMLFormat.plural(module.groups, "group")),"
                  + " \(HTMLFormat.plural(module.objects, "object")), \(module.bytes) bytes")
            }
          }
          for group in library.prefix(limits.findings) {
            render(group, allFrames: allFrames, into: &details)
          }
        }
      }
    }
  }

  private static func render(
    _ group: CensusGroup, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    html.element("details", [("class", "finding census"), ("data-kind", group.kind.rawValue)]) {
      details in
      details.element("summary") { summary in
        summary.element("strong", text: group.kind == .cycle ? "ROOT CYCLE " : "ROOT LEAK ")
        summary.element("code", text: group.tree.first?.type ?? group.members.first?.type ?? "?")
        summary.element(
          "span", [("class", "muted")],
          text: " · \(HTMLFormat.plural(group.count, "object")), \(group.bytes) bytes · \(group.id)"
            + (group.instances > 1 ? " ×\(group.instances)" : ""))
      }
      details.element(
        "pre", [("class", "mono")],
        text: CensusLeaksText.group(group, allFrames: allFrames).joined(separator: "\n"))
    }
  }
}

extension String {
  fileprivate var trimmingPrefixSpaces: String {
    String(drop { $0 == " " })
  }
}
