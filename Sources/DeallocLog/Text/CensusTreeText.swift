/// One census finding as Apple's `leaks` prints it: the first instance's tree
/// (`2 (80 bytes) ROOT CYCLE: <Shop.Order 0x…> [40]`, children indented as `payment --> `,
/// `CYCLE BACK TO` for the reference that closes the cycle), then its cycle by field, its id
/// and how many groups share its shape.
///
/// Why here: the reports (`DeallocAnalysis`) and the leak assertions' failure messages
/// (`DeallocTesting`, which links no renderer) print the same tree. Unescaped: each output
/// escapes for its medium.
public enum CensusTreeText {
  /// The group's lines, its allocation stack listed by `listing`.
  public static func lines(_ group: CensusGroup, listing: StackLines = .callers) -> [String] {
    var lines: [String] = []
    for (index, line) in group.tree.enumerated() {
      var text = "    " + String(repeating: "   ", count: line.depth)
      if !line.back {
        let count = index == 0 ? group.count / max(1, group.instances) : line.count
        let bytes = index == 0 ? group.bytes / max(1, group.instances) : line.bytes
        text += "\(count) (\(bytes) bytes) "
      }
      if let via = line.via { text += "\(via) --> " }
      if index == 0 { text += group.kind == .cycle ? "ROOT CYCLE: " : "ROOT LEAK: " }
      if line.back { text += "CYCLE BACK TO " }
      text += "<\(line.type)\(line.object.map { " \($0)" } ?? "")> [\(line.size)]"
      lines.append(text)
    }
    lines += allocatedAt(
      group.allocationStack, sampledOneIn: group.allocationSampleEvery, listing: listing)
    var footer = "    "
    if !group.edges.isEmpty { footer += "cycle: \(group.cycleText); " }
    footer += "id \(group.id)"
    if group.instances > 1 {
      footer += " ×\(group.instances) (\(group.count) objects, \(group.bytes) bytes in all)"
    }
    lines.append(footer)
    return lines
  }
}

extension CensusTreeText {
  /// Frames of an allocation stack shown, after the machinery's.
  public static let allocationFramesShown = 6

  /// `allocated at:` and the stack's frames as `listing` lists them, one a line (the
  /// leading machinery frames, the Swift runtime's allocator, left out), then its lines.
  /// A stack of machinery only is shown whole. Empty for no stack, but `allocation not
  /// sampled` when sampling (one allocation in `sampledOneIn`) left it out; a sampled run
  /// states its rate on either line.
  public static func allocatedAt(
    _ stack: [Frame], sampledOneIn: Int = 1, listing: StackLines = .callers
  ) -> [String] {
    let rate = sampledOneIn > 1 ? " (sampled 1 in \(sampledOneIn))" : ""
    guard !stack.isEmpty else {
      return sampledOneIn > 1 ? ["    allocation not sampled\(rate)"] : []
    }
    var lines = listing.lines(stack, allocationFramesShown)
    if lines.isEmpty { lines = stack.prefix(allocationFramesShown).map(StackLines.line) }
    return ["    allocated at\(rate):"] + lines.map { "      " + $0 }
  }
}

extension CensusRecord {
  /// The census whose members a recorder's census returned (a `census` record without
  /// `ev`, `t` and `tid`: `DeallocTrace`'s in-process census); nil when they do not read as
  /// one.
  public static func parse(members: String, time: Int64 = 0) -> CensusRecord? {
    var bytes = Array("{\"ev\":\"census\",\"t\":\(time),\(members)}".utf8)
    var parser = RecordParser()
    let record = bytes.withUnsafeMutableBufferPointer { buffer in
      try? parser.parse(UnsafeBufferPointer(buffer))
    }
    guard case .census(let census)? = record else { return nil }
    return census
  }
}
