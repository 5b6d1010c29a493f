import DeallocLog

/// The findings, grouped by signature, most serious first: each group is a `<details>` whose
/// summary names the kind, the type and the caller, and whose body holds the explanation, the
/// first members and the enqueue stack.
enum HTMLFindingsSection {
  static func render(
    _ report: Report, limits: HTMLRenderer.Limits, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    html.element("section", [("id", "findings")]) { section in
      section.element("h2") { title in
        title.text("Findings ")
        title.raw("<button id=\"expand-all\" type=\"button\" hidden=\"hidden\">Expand all</button>")
      }
      guard !report.findings.isEmpty else {
        section.element(
          "p", [("class", "muted")],
          text: "No findings: nothing leaked, stuck, never released or truly leaked.")
        return
      }
      for (index, finding) in report.findings.prefix(limits.findings).enumerated() {
        render(
          finding, open: index == 0, limits: limits, allFrames: allFrames, into: &section)
      }
      HTMLFormat.writeOmitted(
        shown: min(limits.findings, report.findings.count), total: report.findings.count,
        "finding groups", into: &section)
      if let hint = HolderHint.text(report) {
        section.element("p", [("class", "note holders-hint")], text: hint)
      }
    }
  }

  /// The holder path, folded: a `<details>` whose summary says who holds the object in a
  /// few words and whose body is the path as text (``HolderPathText``), escaped.
  private static func holders(_ finding: Finding, allFrames: Bool, into html: inout HTMLBuffer) {
    holders(lines: RenderingSupport.holderLines(finding, allFrames: allFrames), into: &html)
  }

  /// The holder path's lines (``HolderPathText``), folded as under a finding; also under a
  /// late object held past its release (``HTMLLateSection``).
  static func holders(lines: [String], into html: inout HTMLBuffer) {
    guard !lines.isEmpty else { return }
    // Open: the path is what the reader of a leak wants first; it folds away like the rest.
    html.element("details", [("class", "holders"), ("open", "open")]) { details in
      // A heading ("held by (…):") is the summary and the chain the body; a one-line
      // path (a retain cycle) is both.
      let heading = lines[0].hasSuffix(":") && lines.count > 1
      details.element("summary", text: heading ? String(lines[0].dropLast()) : lines[0])
      let body =
        heading
        ? lines.dropFirst().map { $0.hasPrefix("  ") ? String($0.dropFirst(2)) : $0 } : lines
      details.element("pre", [("class", "holder-path mono")], text: body.joined(separator: "\n"))
    }
  }

  private static func render(
    _ finding: Finding, open: Bool, limits: HTMLRenderer.Limits, allFrames: Bool,
    into html: inout HTMLBuffer
  ) {
    html.element(
      "details",
      [
        ("class", "finding"), ("data-kind", finding.kind.rawValue),
        ("open", open ? "open" : nil),
      ]
    ) { details in
      details.element("summary") { summary in
        summary.element(
          "span", [("class", "badge k-\(finding.kind.rawValue)")], text: finding.kind.title)
        summary.element("strong") { strong in
          strong.element("code", text: finding.signature.type)
        }
        if let caller = finding.signature.frames.first {
          summary.text(" from ")
          summary.element("code", text: FrameNaming.shortName(caller))
        }
        summary.element(
          "span", [("class", "muted")],
          text: " · "
            + HTMLFormat.plural(
              finding.count, finding.kind == .trueLeak ? "check" : "object"))
        summary.element("span", [("class", "muted mono")], text: " · id:\(finding.id)")
      }
      details.element("div") { body in
        body.element("p", text: finding.explanation)
        if !finding.examples.isEmpty {
          body.element("ul", [("class", "examples mono")]) { list in
            for example in finding.examples {
              list.element("li", text: RenderingSupport.example(example, of: finding))
            }
          }
          if finding.count > finding.examples.count {
            body.element(
              "p", [("class", "note")],
              text: "First \(finding.examples.count) of \(HTMLFormat.count(finding.count)) shown.")
          }
        }
        holders(finding, allFrames: allFrames, into: &body)
        HTMLRetainHistoryTable.render(finding.holders?.retainHistory, into: &body)
        stack(finding.stack, limits: limits, allFrames: allFrames, into: &body)
      }
    }
  }

  private static func stack(
    _ frames: [Frame], limits: HTMLRenderer.Limits, allFrames: Bool, into html: inout HTMLBuffer
  ) {
    guard !frames.isEmpty else {
      html.element("p", [("class", "muted")], text: "No enqueue stack (backtraces were off).")
      return
    }
    html.element("div", [("class", "muted")], text: "Enqueue stack, innermost frame first:")
    let listing = StackListing(frames, limit: limits.framesPerStack, allFrames: allFrames)
    html.element("ol", [("class", "stack mono")]) { list in
      for frame in listing.frames {
        let plumbing = Signature.isMachinery(frame) || StackListing.category(frame) != nil
        list.element("li", [("class", plumbing ? "machinery" : nil)]) { item in
          item.text(FrameNaming.name(frame))
          if let location = frame.location {
            item.element("span", [("class", "loc")], text: "  at " + location)
          } else if let module = frame.module, frame.symbol != nil {
            let base = module.split(separator: "/").last.map(String.init) ?? module
            item.element("span", [("class", "loc")], text: "  in " + base)
          }
        }
      }
    }
    HTMLFormat.writeOmitted(
      shown: listing.frames.count, total: listing.frames.count + listing.omitted, "frames",
      into: &html)
    if let folded = listing.foldedLine {
      html.element("p", [("class", "note machinery")], text: folded)
    }
  }
}
