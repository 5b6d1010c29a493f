#if canImport(Glibc)
  import Glibc
#endif

/// Swift names demangled by the runtime this process runs on (`swift_demangle`, which
/// libswiftCore exports and every Swift program links), for names the recorder left mangled.
///
/// Why in process: `swift-demangle` is a child process per batch and only on a toolchain's
/// PATH (``LLVMSymbolizer`` uses it for `--symbolize`); a report names frames whether or not
/// it symbolizes. The trade-off: the runtime's demangler is this build's, so a name mangled
/// by a much newer compiler may stay as it was (it is then shown as it was, never lost).
enum SwiftDemangler {
  private typealias Demangle =
    @convention(c) (
      UnsafePointer<CChar>?, Int, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?, UInt32
    ) -> UnsafeMutablePointer<CChar>?

  private static let demangle: Demangle? = {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_demangle") else { return nil }
    return unsafeBitCast(symbol, to: Demangle.self)
  }()

  /// `mangled` demangled (`$s…` or `_$s…`); `nil` when the runtime does not read it as a
  /// Swift name.
  static func demangled(_ mangled: String) -> String? {
    guard let demangle, mangled.hasPrefix("$s") || mangled.hasPrefix("_$s") else { return nil }
    var name = mangled
    return name.withUTF8 { bytes -> String? in
      let text = bytes.withMemoryRebound(to: CChar.self) { chars in
        demangle(chars.baseAddress, chars.count, nil, nil, 0)
      }
      guard let text else { return nil }
      defer { free(text) }
      let result = String(cString: text)
      return result == mangled ? nil : result
    }
  }
}
