import CElf
import DeallocLog
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Resolves frames that carry `mod` and `off` to function, file and line with the
/// toolchain's `llvm-symbolizer`, and demangles Swift names with `swift-demangle`.
///
/// Why external tools: they read DWARF, which nothing in the toolchain-only dependency set
/// does. Both are found on `PATH` (they ship next to `swift`) and run directly through
/// `Process` with an argument vector, never a shell, so no path or symbol in a log can
/// inject a command. Results are cached per module and offset; one `llvm-symbolizer` run
/// handles all the new offsets of one module in a stack. A frame that already has a file
/// and line is left as it is; a frame that has only a recorded symbol keeps that symbol
/// (the recorder's demangled name) and gains the file and line.
///
/// Module paths come from the log, so they are not trusted: only a regular file (checked
/// with `stat` before use) is handed to llvm-symbolizer, never a device (`/dev/zero` made
/// it grow to 23 GB) or a FIFO (which blocks forever), and every tool runs as a
/// ``BoundedChild`` (time and memory limits, killed with its parent).
///
/// A file is used only when it is the build the log was recorded with: a frame whose
/// module's build id the log recorded is resolved only when the file's own build id (read
/// once per module with CElf) is the same; otherwise it is left as recorded, and one warning
/// per module names the mismatch. A rebuilt binary gave file:line of other code, silently. A
/// frame without a recorded build id (an older log) is resolved as before, unchecked.
public struct LLVMSymbolizer: FrameSymbolizer {
  private var cache: [String: [UInt64: (symbol: String?, file: String?, line: Int?)]] = [:]
  private var missingModules: Set<String> = []
  /// Each module file's build id on this machine, `nil` for a file without one.
  private var fileBuildIDs: [String: String?] = [:]
  /// The modules whose build-id mismatch has been warned about.
  private var mismatchedModules: Set<String> = []
  public private(set) var problems: [String] = []
  private let symbolizerPath: String?
  private let demanglerPath: String?
  private let limits: BoundedChild.Limits
  private let launcher: String?

  /// Finds the tools on `PATH` (or takes explicit paths, for tests). `launcher` is a program
  /// that handles ``BoundedChild/launcherCommand`` (the CLI passes itself); without one the
  /// tools get only the wall-clock limit of `limits`.
  public init(
    symbolizerPath: String? = nil, demanglerPath: String? = nil,
    limits: BoundedChild.Limits = BoundedChild.Limits(), launcher: String? = nil
  ) {
    self.limits = limits
    self.launcher = launcher
    self.symbolizerPath = symbolizerPath ?? Self.which("llvm-symbolizer")
    self.demanglerPath = demanglerPath ?? Self.which("swift-demangle")
    if self.symbolizerPath == nil {
      problems.append("--symbolize: llvm-symbolizer not found on PATH; frames left as recorded")
    }
  }

  public mutating func symbolize(_ frames: [Frame]) -> [Frame] {
    guard let symbolizerPath else { return frames }
    // Return addresses point after the call: look up `off - 1` for every frame but the first.
    func lookupOffset(_ index: Int, _ offset: UInt64) -> UInt64 {
      index == 0 || offset == 0 ? offset : offset - 1
    }
    var wanted: [String: Set<UInt64>] = [:]
    for (index, frame) in frames.enumerated() {
      guard frame.file == nil, let module = frame.module, let offset = frame.offset,
        isRecordedBuild(module, frame.buildID)
      else { continue }
      let key = lookupOffset(index, offset)
      if cache[module]?[key] == nil && !missingModules.contains(module) {
        wanted[module, default: []].insert(key)
      }
    }
    for (module, offsets) in wanted.sorted(by: { $0.key < $1.key }) {
      if let problem = Self.unusableModule(module) {
        missingModules.insert(module)
        problems.append("--symbolize: \(module) \(problem); its frames are left as recorded")
        continue
      }
      resolve(module, offsets.sorted(), with: symbolizerPath)
    }
    return frames.enumerated().map { index, frame in
      guard frame.file == nil, let module = frame.module, let offset = frame.offset,
        isRecordedBuild(module, frame.buildID),
        let found = cache[module]?[lookupOffset(index, offset)]
      else { return frame }
      var resolved = frame
      resolved.symbol = frame.symbol ?? found.symbol
      resolved.file = found.file
      resolved.line = found.line
      return resolved
    }
  }

  /// Whether the file at `module` is the build the log recorded (`recorded`, its build id),
  /// or the log recorded none. A file that cannot be used at all counts as the recorded
  /// build here: ``unusableModule(_:)`` says what is wrong with it instead. Warns once per
  /// module on a mismatch.
  private mutating func isRecordedBuild(_ module: String, _ recorded: String?) -> Bool {
    guard let recorded else { return true }
    let onDisk: String?
    if let known = fileBuildIDs[module] {
      onDisk = known
    } else {
      guard Self.unusableModule(module) == nil else { return true }
      onDisk = Self.fileBuildID(module)
      fileBuildIDs[module] = onDisk
    }
    if onDisk == recorded { return true }
    if mismatchedModules.insert(module).inserted {
      problems.append(
        "--symbolize: \(module) is not the build the log was recorded with (build id "
          + "\(recorded) in the log, \(onDisk ?? "none") in the file); its frames are left "
          + "unsymbolized")
    }
    return false
  }

  /// The GNU build id of the ELF file at `path`, lower-case hex; `nil` when it has none.
  static func fileBuildID(_ path: String) -> String? {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(CELF_BUILD_ID_HEX_CAPACITY)) {
      hex -> String? in
      guard celf_file_build_id(path, hex.baseAddress!, hex.count) != 0 else { return nil }
      return String(cString: hex.baseAddress!)
    }
  }

  private mutating func resolve(_ module: String, _ offsets: [UInt64], with tool: String) {
    let arguments =
      ["--output-style=JSON", "--functions=linkage", "--obj=\(module)"]
      + offsets.map { "0x" + String($0, radix: 16) }
    let output: String
    switch BoundedChild.run(tool, arguments, limits: limits, launcher: launcher) {
    case .output(let text): output = text
    case .failed:
      problems.append("--symbolize: llvm-symbolizer failed on \(module)")
      missingModules.insert(module)
      return
    case .timedOut:
      problems.append(
        "--symbolize: llvm-symbolizer took longer than \(limits.seconds) s on \(module); killed")
      missingModules.insert(module)
      return
    }
    // One JSON array for all the addresses: {"Address": "0x…", "Symbol": [{…}, …]} each,
    // inlined frames first; the first entry names the innermost function.
    var results: [UInt64: (symbol: String?, file: String?, line: Int?)] = [:]
    var mangled: [String] = []
    // Read by the one JSON reader of baselines and saved reports (`JSONParser`).
    let entries = (try? JSONParser.parse(output))?.arrayValue ?? []
    for entry in entries {
      guard let address = entry["Address"]?.stringValue.flatMap(Self.hex),
        let first = entry["Symbol"]?.arrayValue?.first
      else { continue }
      func known(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text != "??" else { return nil }
        return text
      }
      let function = known(first["FunctionName"]?.stringValue)
      let file = known(first["FileName"]?.stringValue)
      let lineNumber = first["Line"]?.intValue.flatMap { $0 == 0 ? nil : Int($0) }
      results[address] = (function, file, lineNumber)
      if let function, function.hasPrefix("$s") || function.hasPrefix("_$s") {
        mangled.append(function)
      }
    }
    let demangled = demangle(mangled)
    for (offset, value) in results {
      let symbol = value.symbol.map { demangled[$0] ?? $0 }
      cache[module, default: [:]][offset] = (symbol, value.file, value.line)
    }
    for offset in offsets where cache[module]?[offset] == nil {
      cache[module, default: [:]][offset] = (nil, nil, nil)
    }
  }

  private mutating func demangle(_ names: [String]) -> [String: String] {
    guard !names.isEmpty, let demanglerPath else { return [:] }
    let unique = Array(Set(names)).sorted()
    guard
      case .output(let output) = BoundedChild.run(
        demanglerPath, ["--compact"] + unique, limits: limits, launcher: launcher)
    else { return [:] }
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
    var result: [String: String] = [:]
    for (name, line) in zip(unique, lines) where !line.isEmpty { result[name] = String(line) }
    return result
  }

  /// Why `module` cannot be symbolized, or `nil` when it can: it must be a readable,
  /// non-empty regular file (following links), checked before any tool sees it.
  static func unusableModule(_ module: String) -> String? {
    var info = stat()
    guard stat(module, &info) == 0 else { return "is not on this machine" }
    guard info.st_mode & S_IFMT == S_IFREG else { return "is not a regular file" }
    // /proc and /sys files are "regular" with size 0 (and /proc/kcore is a huge one, which
    // the memory limit stops); no binary is empty.
    guard info.st_size > 0 else { return "is empty (or a /proc or /sys file)" }
    guard access(module, R_OK) == 0 else { return "is not readable" }
    return nil
  }

  /// `0x…` as an integer.
  static func hex(_ text: String) -> UInt64? {
    guard text.hasPrefix("0x") else { return nil }
    return UInt64(text.dropFirst(2), radix: 16)
  }

  /// The first executable named `name` on `PATH`.
  static func which(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") where !directory.isEmpty {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}
