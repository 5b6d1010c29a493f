extension Frame {
  /// Whether this frame belongs to the machinery (the queue, the tracer, the unwinder, the
  /// Swift runtime) rather than to the program.
  ///
  /// Why here, beside the record: every enqueue stack starts inside that machinery, and both
  /// the analysis (finding signatures, reports) and the leak assertions' failure messages
  /// skip it the same way.
  public var isMachinery: Bool {
    if let module {
      let base = Self.lastPathComponent(module)
      if base.starts(with: "libswiftCore".utf8) || base.starts(with: "libunwind".utf8)
        || base.starts(with: "libswift_Concurrency".utf8) || base.starts(with: "libdispatch".utf8)
      {
        return symbol.map(Self.isMachinerySymbol) ?? true
      }
    }
    guard let symbol else { return false }
    return Self.isMachinerySymbol(symbol)
  }

  // The names below are compared as UTF-8 bytes, not as Characters: they are ASCII, and a
  // stack's frames are checked for every distinct stack of a log, where Character-wise
  // `hasPrefix` on long demangled names was most of a leak-heavy report's analysis.

  private static let machineryModules = ["DeallocQueue", "DeallocTrace", "CUnwind"]
  private static let machineryPrefixes = machineryModules.flatMap { module in
    [Array((module + ".").utf8), Array("(extension in \(module))".utf8)]
  }
  private static let runtimePrefixes = [
    "swift_", "_swift_", "cunwind_", "ctrace_", "unw_", "_U", "__swift",
  ].map { Array($0.utf8) }

  private static func isMachinerySymbol(_ symbol: String) -> Bool {
    let bytes = symbol.utf8
    if runtimePrefixes.contains(where: { bytes.starts(with: $0) }) { return true }
    let context = owningContext(of: Substring(symbol).utf8)
    return machineryPrefixes.contains { context.starts(with: $0) }
  }

  private static func lastPathComponent(_ path: String) -> Substring.UTF8View {
    let whole = Substring(path).utf8
    guard let slash = whole.lastIndex(of: UInt8(ascii: "/")) else { return whole }
    return whole[whole.index(after: slash)...]
  }

  private static let wrappers = [
    "partial apply for ", "merged ", "outlined ", "thunk for ",
    "function signature specialization ",
  ].map { Array($0.utf8) }

  /// Strips the wrappers a demangled name puts before its owner: "closure #1 () -> () in ",
  /// "generic specialization <…> of ", "partial apply for ", "merged "…
  private static func owningContext(of symbol: Substring.UTF8View) -> Substring.UTF8View {
    var rest = symbol
    var changed = true
    while changed {
      changed = false
      for wrapper in wrappers where rest.starts(with: wrapper) {
        rest = rest.dropFirst(wrapper.count)
        changed = true
      }
      if rest.starts(with: "closure #".utf8) || rest.starts(with: "implicit closure #".utf8),
        let after = end(of: " in ", in: rest)
      {
        rest = rest[after...]
        changed = true
      }
      if rest.starts(with: "generic specialization <".utf8)
        || rest.starts(with: "specialized ".utf8),
        let after = end(of: " of ", in: rest)
      {
        rest = rest[after...]
        changed = true
      }
    }
    return rest
  }

  /// Where the first occurrence of `needle` in `text` ends.
  private static func end(of needle: StaticString, in text: Substring.UTF8View)
    -> Substring.UTF8View.Index?
  {
    let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
    var index = text.startIndex
    while index != text.endIndex {
      if text[index...].starts(with: pattern) {
        return text.index(index, offsetBy: pattern.count)
      }
      index = text.index(after: index)
    }
    return nil
  }
}
