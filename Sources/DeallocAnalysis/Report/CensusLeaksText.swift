import DeallocLog

/// The lines of "Leaks in the whole process", in the style of Apple's `leaks`: a header,
/// then each finding's tree (`ROOT CYCLE: <Type 0x…> [bytes]`, children indented as
/// `field --> `, `CYCLE BACK TO` for the reference that closes the cycle), its cycle by
/// field and its finding id; then the libraries' leaks, the delayed objects and the
/// checkpoints. Shared by the text report (as is) and the Markdown one (in a code block),
/// which escape the lines for their output.
enum CensusLeaksText {
  /// The lines for `section`; empty when the log held no census. `allFrames` as for
  /// ``StackListing``, for the allocation stacks.
  static func lines(_ section: CensusSection, maximumFindings: Int, allFrames: Bool) -> [String] {
    guard let final = section.final else { return [] }
    var lines = ["Leaks in the whole process (census \"\(final.label)\"):"]
    if let error = final.error {
      lines.append("    the census could not run: \(error)")
      lines += checkpoints(section)
      return lines
    }
    lines.append(
      "    \(RenderingSupport.plural(final.leaked, "leak")) for \(final.leakedBytes) total leaked"
        + " bytes among \(RenderingSupport.plural(final.objects, "live Swift object"))"
        + (final.microseconds.map { " (census: \($0) us)" } ?? "") + ".")
    let program = final.programGroups
    for group in program.prefix(maximumFindings) {
      lines += self.group(group, allFrames: allFrames)
    }
    let unlisted = max(0, program.count - maximumFindings) + final.moreFindings
    if unlisted > 0 {
      lines.append("    ... and \(RenderingSupport.plural(unlisted, "more finding")).")
    }
    let library = final.libraryGroups
    if !library.isEmpty {
      lines.append(
        "  Library leaks (the toolchain's own, never counted by the gate): "
          + "\(RenderingSupport.plural(final.libraryLeaked, "object")), "
          + "\(final.libraryLeakedBytes) bytes.")
      for module in CensusLibraries.byModule(library) {
        lines.append(
          "    \(module.module): \(RenderingSupport.plural(module.groups, "group")),"
            + " \(RenderingSupport.plural(module.objects, "object")), \(module.bytes) bytes.")
      }
      for group in library.prefix(maximumFindings) {
        lines += self.group(group, allFrames: allFrames)
      }
    }
    for queue in final.delayed {
      let types = queue.types.map { "\($0.type) ×\($0.count)" }.joined(separator: ", ")
      lines.append(
        "  Delayed, not leaked: \(RenderingSupport.plural(queue.count, "object")) waiting in"
          + " queue '\(queue.queue)' (\(types)).")
    }
    if final.threadsUnstopped > 0 {
      lines.append(
        "  \(RenderingSupport.plural(final.threadsUnstopped, "thread")) could not be stopped"
          + " during the census: \(final.threadsUnstopped == 1 ? "its" : "their") registers"
          + " were not seen.")
    }
    lines += checkpoints(section)
    lines += growing(section, allFrames: allFrames)
    return lines
  }

  /// The types that grew at every checkpoint of a label.
  private static func growing(_ section: CensusSection, allFrames: Bool) -> [String] {
    let growing = section.growing
    guard !growing.isEmpty else { return [] }
    return ["  Growing at every checkpoint (still reachable, only ever added to):"]
      + growing.prefix(20).flatMap { type in
        (["\(type.text)"] + type.instanceLines(listing: StackListing.lines(allFrames: allFrames)))
          .map { "    " + $0 }
      }
  }

  /// One finding: its first instance's tree, then its cycle, id and instances.
  static func group(_ group: CensusGroup, allFrames: Bool) -> [String] {
    CensusTreeText.lines(group, listing: StackListing.lines(allFrames: allFrames))
  }

  /// The censuses before the final one, by label, with their leak counts.
  private static func checkpoints(_ section: CensusSection) -> [String] {
    let earlier = section.censuses.dropLast(section.omitted == 0 ? 1 : 0)
    guard !earlier.isEmpty else { return [] }
    let listed = earlier.map { census in
      census.error != nil
        ? "\"\(census.label)\" (could not run)"
        : "\"\(census.label)\" \(RenderingSupport.plural(census.leaked, "leak"))"
          + " (\(census.leakedBytes) bytes, \(census.objects) live)"
    }
    return ["  Checkpoints: " + listed.joined(separator: ", ") + "."]
  }
}
