import DeallocLog
import TextEscaping

/// `dealloctrace explain LOG... id:ID` for a census finding: its kind, whether it is the
/// program's or a library's, its members, its cycle's references, its tree, its instances,
/// and which censuses (the exit one, checkpoints) found it.
///
/// Why its own renderer: a census finding has no object history to replay (no enqueue, no
/// release), only what each census saw; the newest census that found it is shown in full.
public struct CensusExplainRenderer: Sendable {
  /// Every frame of an allocation stack as recorded (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init() {}

  /// The censuses of `section` in log order, the final one included.
  static func censuses(_ section: CensusSection) -> [CensusRecord] {
    guard let final = section.final else { return [] }
    return section.omitted > 0 ? section.censuses + [final] : section.censuses
  }

  /// The text for the census finding `id`; nil when no census of `section` has it.
  public func render(_ id: FindingID, in section: CensusSection) -> String? {
    let all = Self.censuses(section)
    let found = all.compactMap { census in
      census.groups.first { $0.id == id.hex }.map { (census, $0) }
    }
    guard let (latest, group) = found.last else { return nil }
    typealias S = RenderingSupport
    var out = [
      "Census finding id:\(group.id): \(group.kind == .cycle ? "ROOT CYCLE" : "ROOT LEAK")"
        + " of \(group.rootType), "
        + (group.library
          ? "a library leak (\(CensusLibraries.library(of: group)); never counted by the gate)"
          : "the program's leak"),
      "  instances: \(group.instances) (\(S.plural(group.count, "object")),"
        + " \(group.bytes) bytes in all) in census \"\(latest.label)\"",
      "  members of one instance:",
    ]
    for member in group.members {
      out.append("    \(member.type) ×\(member.count) (\(member.bytes) bytes)")
    }
    if !group.edges.isEmpty {
      out.append("  cycle edges:")
      for (index, edge) in group.edges.enumerated() {
        let next = group.edges[(index + 1) % group.edges.count].type
        out.append("    \(edge.type) --\(edge.field)--> \(next)")
      }
    }
    out.append("  tree (first instance):")
    out += CensusTreeText.lines(group, listing: StackListing.lines(allFrames: allFrames)).map {
      "  " + $0
    }
    out.append("  found by:")
    for census in all {
      let match = census.groups.first { $0.id == id.hex }
      let when = "census \"\(census.label)\" at \(TimeFormatting.format(census.time))"
      if let match {
        out.append(
          "    \(when): ×\(match.instances) (\(match.count) objects, \(match.bytes) bytes)")
      } else if census.error != nil {
        out.append("    \(when): could not run")
      } else {
        out.append("    \(when): not found")
      }
    }
    if section.omitted > 0 {
      out.append("    (\(S.plural(section.omitted, "more census", "more censuses")) not kept)")
    }
    return out.map(Escaping.terminal).joined(separator: "\n") + "\n"
  }
}
