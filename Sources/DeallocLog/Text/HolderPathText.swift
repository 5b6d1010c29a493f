/// The text of a holder report: the lines every text-like output shows under a finding
/// (`report` text, Markdown and HTML, `explain`, `check` text, JUnit and GitHub annotations)
/// and the leak assertions' failure messages.
///
/// One rule in one place: each output indents these lines and escapes them its own way, so
/// a path reads the same everywhere.
///
/// ```
/// held by (shortest path from a root):
///   global Shop.ImageCache.shared  (Shop)
///   → Shop.ImageCache.keep
///   → [element 2 of 3]  _ContiguousArrayStorage<AnyObject>
///   → Shop.Thumb 0x7f75…c10
/// ```
/// A cycle is one line, `retain cycle: A.f → closure context (captures A, String) → A`.
/// Several direct holders are all listed (numbered), then "and N more". A stack root
/// carries the note that a stack slot may be stale; heap and depth-limit roots say plainly
/// that no root was found.
public enum HolderPathText {
  /// The lines for `report`, about an object of type `type` at `address`. The first line is
  /// a heading; the others are indented by two spaces under it. `moment` says when the
  /// scan saw the holders, after "held" in the heading (`"at its release"`: "held at its
  /// release by …"); a retain cycle's one line is the same at any moment. `listing` lists the
  /// allocation stack.
  public static func lines(
    _ report: HolderReport, type: String, address: Address?, moment: String? = nil,
    listing: StackLines = .callers
  ) -> [String] {
    var lines = holderLines(report, type: type, address: address, moment: moment)
    if report.surplus > 0 {
      let (was, them) = report.surplus == 1 ? ("was", "it") : ("were", "them")
      lines.append(
        "  (\(plural(report.surplus, "more word")) pointed at it and \(was) left out: its strong"
          + " count is made up without \(them))")
    }
    // Where it was allocated, as a census group says it, at this text's indentation.
    let census = "    "
    return lines
      + CensusTreeText.allocatedAt(report.allocationStack, listing: listing).map {
        String($0.dropFirst(census.count))
      }
      + RetainHistoryText.outstandingLines(report.retainHistory)
  }

  private static func holderLines(
    _ report: HolderReport, type: String, address: Address?, moment: String?
  ) -> [String] {
    let target = type + (address.map { " " + abbreviated($0) } ?? "")
    let held = "held" + (moment.map { " " + $0 } ?? "")
    guard !report.paths.isEmpty else {
      if report.direct == 0 {
        return [
          "\(held) by: no reference found in the scanned memory (a register, or the scanning"
            + " thread's own stack, may hold it)"
        ]
      }
      return ["\(held) by \(plural(report.direct, "direct holder")) (no path recorded)"]
    }
    if report.paths.count == 1 && report.more == 0 {
      let path = report.paths[0]
      let chain = self.chain(path, target: target, type: type)
      switch path.root.kind {
      case .cycle: return chain
      case .global, .stack:
        return ["\(held) by (shortest path from a root):"] + chain.map { "  " + $0 }
      default: return ["\(held) by (no root found):"] + chain.map { "  " + $0 }
      }
    }
    var out = [
      "\(held) by \(plural(max(report.direct, report.paths.count + report.more), "direct holder")):"
    ]
    for (number, path) in report.paths.enumerated() {
      let lines = chain(path, target: target, type: type)
      let prefix = "\(number + 1). "
      out.append("  " + prefix + lines[0])
      let pad = String(repeating: " ", count: prefix.count)
      for line in lines.dropFirst() { out.append("  " + pad + line) }
    }
    if report.more > 0 { out.append("  … and \(report.more) more") }
    return out
  }

  /// One path without a heading: a one-line cycle, or the root's line and one line per
  /// step, each starting with `→`, down to the object.
  static func chain(_ path: HolderPath, target: String, type: String) -> [String] {
    if path.root.kind == .cycle {
      var parts = path.steps.map(label)
      if path.omittedSteps > 0 {
        parts.insert("… \(path.omittedSteps) more", at: max(0, parts.count - 1))
      }
      return ["retain cycle: " + (parts + [type]).joined(separator: " → ")]
    }
    var out = [root(path.root)]
    for (index, step) in path.steps.enumerated() {
      if path.omittedSteps > 0 && index == path.steps.count - 1 {
        out.append("→ … \(path.omittedSteps) more")
      }
      out.append("→ " + label(step))
    }
    out.append("→ " + target)
    return out
  }

  /// The root's line.
  static func root(_ root: HolderRoot) -> String {
    switch root.kind {
    case .global:
      let module = root.module.map(baseName)
      if let symbol = root.symbol {
        return "global \(symbol)" + (module.map { "  (\($0))" } ?? "")
      }
      let offset = root.offset.map { "+0x" + String($0, radix: 16) } ?? ""
      return "global in \(module ?? "an unknown module")\(offset) (no symbol)"
    case .stack:
      let thread = root.tid.map { "thread \($0) stack" } ?? "a thread's stack"
      return thread + " (a stack slot may be stale)"
    case .heap:
      return "unrooted: memory that is not a Swift object (a malloc'ed buffer or a non-Swift"
        + " allocation); the path stops there"
    case .none:
      return "unrooted: no root within the scan's depth limit"
    default:
      return "root '\(root.kind.rawValue)'"
    }
  }

  /// A step: what it is, and the reference in it that points on.
  static func label(_ step: HolderStep) -> String {
    switch step.edge {
    case .field(let name): return "\(step.type).\(name)"
    case .element(let index, let count):
      let of = count.map { " of \($0)" } ?? ""
      return "[element \(index)\(of)]  \(step.type)"
    case .captures(let types):
      let list = types.isEmpty ? "nothing" : types.map(shortName).joined(separator: ", ")
      return "\(step.type) (captures \(list))"
    case .unnamed:
      // A word the metadata does not name may not own the object (Unmanaged,
      // unowned(unsafe), a raw pointer): said where it applies.
      return step.type + (step.offset.map { " +\($0)" } ?? "")
        + " (an unnamed word; it may not own what it points at)"
    }
  }

  /// `Shop.CartModel` → `CartModel`, `Swift.Array<Shop.Thumb>` → `Array<Shop.Thumb>`: the
  /// module prefix dropped, for the captures list.
  static func shortName(_ type: String) -> String {
    guard let dot = type.firstIndex(of: "."),
      !type[..<dot].contains(where: { "<(, [".contains($0) })
    else { return type }
    return String(type[type.index(after: dot)...])
  }

  /// `0x7f75aa001c10` → `0x7f75…c10`: enough to tell objects apart at a glance; the full
  /// address is on the example's line.
  static func abbreviated(_ address: Address) -> String {
    let text = address.description
    guard text.count > 10 else { return text }
    return String(text.prefix(6)) + "…" + String(text.suffix(3))
  }

  private static func baseName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
  }

  private static func plural(_ count: Int, _ word: String) -> String {
    "\(count) \(word)\(count == 1 ? "" : "s")"
  }
}
