import CElf
import CUnwind

/// Resolves code addresses to module, offset and demangled symbol, once per distinct
/// address, on the writer thread only.
///
/// Symbols come from each loaded object's own ELF symbol tables (`.symtab` as well as
/// `.dynsym`, so the functions of a Swift executable that `dladdr` cannot see are found),
/// read once per object and kept sorted by `cunwind_describe_address`. The trade-off: the
/// first address in an object pays for reading its tables (a few milliseconds for
/// libFoundation), every later one a binary search, about a microsecond plus the demangling.
/// libunwind's `unw_get_proc_name` re-read the file on every call (230-250 µs an address),
/// which let one batch of new stacks hold the writer far past its flush interval.
struct Symbolizer {
  struct Frame {
    var module: String?
    var offset: UInt?
    var symbol: String?
    /// The module's GNU build id, lower-case hex; `nil` when it has none.
    var buildID: String?
  }

  private var cache: [UInt: Frame] = [:]
  /// Each module's build id, read once (from its program headers in memory) the first time
  /// an address in it is described.
  private var buildIDs: [String: String?] = [:]

  /// `address` is a return address (every recorded frame is one: the tracer's own frames
  /// are cut off), so the lookup uses `address - 1`, which lies inside the call.
  mutating func frame(forReturnAddress address: UInt) -> Frame {
    if let known = cache[address] { return known }
    var frame = Frame()
    let lookup = address > 0 ? address - 1 : address
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096 + 2048) { buffer in
      let module = buffer.baseAddress!
      let symbol = module + 4096
      var base: UInt = 0
      let found = Int(
        cunwind_describe_address(lookup, module, 4096, &base, symbol, buffer.count - 4096))
      if found & Int(CUNWIND_FOUND_MODULE) != 0 {
        let path = String(cString: module)
        frame.module = path
        frame.offset = address &- base
        frame.buildID = buildID(ofModule: path, containing: lookup)
      }
      if found & Int(CUNWIND_FOUND_SYMBOL) != 0 {
        frame.symbol = String(cString: symbol)
      }
    }
    cache[address] = frame
    return frame
  }

  private mutating func buildID(ofModule path: String, containing address: UInt) -> String? {
    if let known = buildIDs[path] { return known }
    let hex = withUnsafeTemporaryAllocation(
      of: CChar.self, capacity: Int(CELF_BUILD_ID_HEX_CAPACITY)
    ) {
      hex -> String? in
      guard cunwind_build_id(address, hex.baseAddress!, hex.count) != 0 else { return nil }
      return String(cString: hex.baseAddress!)
    }
    buildIDs[path] = hex
    return hex
  }
}
