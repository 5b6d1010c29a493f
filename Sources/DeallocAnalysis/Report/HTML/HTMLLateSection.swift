/// Late objects held past their release: each group (same type, caller and holder path) is
/// a `<details>` whose summary names the type, the caller and the count, and whose body
/// lists the first members and the holder path seen at the release, folded like a
/// finding's. Absent when no late object has a holders record.
enum HTMLLateSection {
  static func render(
    _ report: Report, limits: HTMLRenderer.Limits, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    guard !report.lateHeld.isEmpty || report.omittedLateHeld > 0 else { return }
    html.element("section", [("id", "late-held")]) { section in
      section.element("h2", text: RenderingSupport.lateHeading(report))
      section.element("p", [("class", "muted")], text: RenderingSupport.lateMeaning)
      for group in report.lateHeld.prefix(limits.lateGroups) {
        render(group, allFrames: allFrames, into: &section)
      }
      if let omitted = RenderingSupport.lateOmitted(report, shown: limits.lateGroups) {
        section.element("p", [("class", "note omitted")], text: omitted)
      }
    }
  }

  private static func render(
    _ group: LateHeldGroup, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    html.element("details", [("class", "finding late-held"), ("data-kind", "late")]) { details in
      details.element("summary") { summary in
        // The page's style sheet has no late badge: its colour is set here, so that pages
        // without this section stay byte for byte what they were.
        summary.element(
          "span", [("class", "badge k-late"), ("style", "background:var(--late)")],
          text: "held past release")
        summary.element("strong") { strong in
          strong.element("code", text: group.signature.type)
        }
        if let caller = group.signature.frames.first {
          summary.text(" from ")
          summary.element("code", text: FrameNaming.shortName(caller))
        }
        summary.element(
          "span", [("class", "muted")], text: " · " + HTMLFormat.plural(group.count, "object"))
      }
      details.element("div") { body in
        body.element("ul", [("class", "examples mono")]) { list in
          for example in group.examples {
            list.element(
              "li",
              text: "session \(example.session + 1): id \(example.id), \(example.address), "
                + RenderingSupport.lateRelease(example))
          }
        }
        if group.count > group.examples.count {
          body.element(
            "p", [("class", "note")],
            text: "First \(group.examples.count) of \(HTMLFormat.count(group.count)) shown.")
        }
        HTMLFindingsSection.holders(
          lines: RenderingSupport.lateHolderLines(group, allFrames: allFrames), into: &body)
      }
    }
  }
}
