extension Frame {
  /// Whether this frame belongs to the machinery (the queue, the tracer, the unwinder, the
  /// Swift runtime) rather than to the program.
  ///
  /// Why here, beside the record: every enqueue stack starts inside that machinery, and both
  /// the analysis (finding signatures, reports) and the leak assertions' failure messages
  /// skip it the same way.
  public var isMachinery: Bool {
    if let module {
      let base = module.split(separator: "/").last ?? Substring(module)
      if base.hasPrefix("libswiftCore") || base.hasPrefix("libunwind")
        || base.hasPrefix("libswift_Concurrency") || base.hasPrefix("libdispatch")
      {
        return symbol.map(Self.isMachinerySymbol) ?? true
      }
    }
    guard let symbol else { return false }
    return Self.isMachinerySymbol(symbol)
  }

  private static let machineryModules = ["DeallocQueue", "DeallocTrace", "CUnwind"]

  private static func isMachinerySymbol(_ symbol: String) -> Bool {
    if symbol.hasPrefix("swift_") || symbol.hasPrefix("_swift_") || symbol.hasPrefix("cunwind_")
      || symbol.hasPrefix("unw_") || symbol.hasPrefix("_U") || symbol.hasPrefix("__swift")
    {
      return true
    }
    let context = owningContext(of: Substring(symbol))
    for module in machineryModules {
      if context.hasPrefix(module + ".") || context.hasPrefix("(extension in \(module))") {
        return true
      }
    }
    return false
  }

  /// Strips the wrappers a demangled name puts before its owner: "closure #1 () -> () in ",
  /// "generic specialization <…> of ", "partial apply for ", "merged "…
  private static func owningContext(of symbol: Substring) -> Substring {
    var rest = symbol
    let wrappers = [
      "partial apply for ", "merged ", "outlined ", "thunk for ",
      "function signature specialization ",
    ]
    var changed = true
    while changed {
      changed = false
      for wrapper in wrappers where rest.hasPrefix(wrapper) {
        rest = rest.dropFirst(wrapper.count)
        changed = true
      }
      if rest.hasPrefix("closure #") || rest.hasPrefix("implicit closure #"),
        let range = rest.range(of: " in ")
      {
        rest = rest[range.upperBound...]
        changed = true
      }
      if rest.hasPrefix("generic specialization <") || rest.hasPrefix("specialized "),
        let range = rest.range(of: " of ")
      {
        rest = rest[range.upperBound...]
        changed = true
      }
    }
    return rest
  }
}
