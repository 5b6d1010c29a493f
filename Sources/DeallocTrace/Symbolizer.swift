import CUnwind

/// Resolves code addresses to module, offset and demangled symbol, once per distinct
/// address, on the writer thread only.
///
/// Symbol lookup goes through libunwind (`unw_get_proc_name`), which reads `.symtab` and
/// so finds the functions of a Swift executable that `dladdr` cannot see. The trade-off is
/// a few microseconds per new address, paid by the writer, never by the recording thread.
struct Symbolizer {
  struct Frame {
    var module: String?
    var offset: UInt?
    var symbol: String?
  }

  private var cache: [UInt: Frame] = [:]

  /// `address` is a return address (every recorded frame is one: the tracer's own frames
  /// are cut off), so the lookup uses `address - 1`, which lies inside the call.
  mutating func frame(forReturnAddress address: UInt) -> Frame {
    if let known = cache[address] { return known }
    var frame = Frame()
    let lookup = address > 0 ? address - 1 : address
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { buffer in
      var base: UInt = 0
      if cunwind_module_of(lookup, buffer.baseAddress, buffer.count, &base) != 0 {
        frame.module = String(cString: buffer.baseAddress!)
        frame.offset = address &- base
      }
      if cunwind_symbol_name(lookup, buffer.baseAddress, buffer.count) != 0 {
        frame.symbol = String(cString: buffer.baseAddress!)
      }
    }
    cache[address] = frame
    return frame
  }
}
