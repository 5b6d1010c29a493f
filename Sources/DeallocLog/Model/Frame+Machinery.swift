#if canImport(Glibc)
  import Glibc
#endif

extension Frame {
  /// Whether this frame belongs to the machinery (the queue, the tracer, the unwinder, the
  /// Swift runtime) rather than to the program.
  ///
  /// Why here, beside the record: every enqueue stack starts inside that machinery, and both
  /// the analysis (finding signatures, reports) and the leak assertions' failure messages
  /// skip it the same way.
  public var isMachinery: Bool {
    if var module {
      let inMachineryModule = module.withUTF8 { path in
        let base = Self.lastPathComponentStart(path)
        return Self.machineryLibraries.contains { Self.continues(path, at: base, with: $0) }
      }
      if inMachineryModule { return symbol.map(Self.isMachinerySymbol) ?? true }
    }
    guard let symbol else { return false }
    return Self.isMachinerySymbol(symbol)
  }

  // The names below are compared as UTF-8 bytes where they lie, not as Characters or through
  // `Substring` views: they are ASCII, and each distinct frame of a log is judged at the end
  // of every report (twice on a leak-heavy one, once per thread that groups findings), where
  // the views' index checks made a judgement about 4,000 instructions.

  /// Whether this frame is the queue's or the tracer's own code (not the runtime's): a
  /// reference that code took is the recorder's, not the program's.
  public var isRecorderCode: Bool {
    guard var symbol else { return false }
    return symbol.withUTF8 { bytes in
      var context = Self.owningContext(of: bytes)
      // A static member's demangled name starts with "static ".
      if Self.continues(bytes, at: context, with: Self.staticPrefix) {
        context += Self.staticPrefix.count
      }
      return Self.machineryPrefixes.contains { Self.continues(bytes, at: context, with: $0) }
    }
  }

  private static let staticPrefix = Array("static ".utf8)

  private static let machineryLibraries = [
    "libswiftCore", "libunwind", "libswift_Concurrency", "libdispatch",
  ].map { Array($0.utf8) }
  private static let machineryModules = ["DeallocQueue", "DeallocTrace", "CUnwind"]
  private static let machineryPrefixes = machineryModules.flatMap { module in
    [Array((module + ".").utf8), Array("(extension in \(module))".utf8)]
  }
  private static let runtimePrefixes = [
    "swift_", "_swift_", "cunwind_", "ctrace_", "unw_", "_U", "__swift",
  ].map { Array($0.utf8) }

  private static func isMachinerySymbol(_ symbol: String) -> Bool {
    var symbol = symbol
    return symbol.withUTF8 { bytes in
      if runtimePrefixes.contains(where: { continues(bytes, at: 0, with: $0) }) { return true }
      let context = owningContext(of: bytes)
      return machineryPrefixes.contains { continues(bytes, at: context, with: $0) }
    }
  }

  /// Where the last component of a path starts (after its last `/`).
  private static func lastPathComponentStart(_ path: UnsafeBufferPointer<UInt8>) -> Int {
    var index = path.count
    while index > 0, path[index - 1] != UInt8(ascii: "/") { index -= 1 }
    return index
  }

  private static let wrappers = [
    "partial apply for ", "merged ", "outlined ", "thunk for ",
    "function signature specialization ",
  ].map { Array($0.utf8) }
  private static let closures = ["closure #", "implicit closure #"].map { Array($0.utf8) }
  private static let specializations = ["generic specialization <", "specialized "].map {
    Array($0.utf8)
  }
  private static let inSeparator = Array(" in ".utf8)
  private static let ofSeparator = Array(" of ".utf8)

  /// Where a demangled name's owner starts, past the wrappers put before it: "closure #1 ()
  /// -> () in ", "generic specialization <…> of ", "partial apply for ", "merged "…
  private static func owningContext(of symbol: UnsafeBufferPointer<UInt8>) -> Int {
    var rest = 0
    var changed = true
    while changed {
      changed = false
      for wrapper in wrappers where continues(symbol, at: rest, with: wrapper) {
        rest += wrapper.count
        changed = true
      }
      if closures.contains(where: { continues(symbol, at: rest, with: $0) }),
        let after = end(of: inSeparator, in: symbol, from: rest)
      {
        rest = after
        changed = true
      }
      if specializations.contains(where: { continues(symbol, at: rest, with: $0) }),
        let after = end(of: ofSeparator, in: symbol, from: rest)
      {
        rest = after
        changed = true
      }
    }
    return rest
  }

  /// Whether `bytes` continue at `offset` with `prefix` (not empty).
  @inline(__always)
  private static func continues(
    _ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, with prefix: [UInt8]
  ) -> Bool {
    guard bytes.count - offset >= prefix.count, let base = bytes.baseAddress else {
      return false
    }
    return prefix.withUnsafeBufferPointer { memcmp(base + offset, $0.baseAddress!, $0.count) == 0 }
  }

  /// Where the first occurrence of `needle` (not empty) in `bytes` from `start` ends: each
  /// candidate found by its first byte (`memchr`), then compared whole.
  private static func end(
    of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int
  ) -> Int? {
    guard let base = bytes.baseAddress else { return nil }
    var from = start
    while bytes.count - from >= needle.count {
      guard
        let found = memchr(base + from, Int32(needle[0]), bytes.count - from - needle.count + 1)
      else { return nil }
      let at = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - base
      if continues(bytes, at: at, with: needle) { return at + needle.count }
      from = at + 1
    }
    return nil
  }
}
