import Foundation

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
public struct LLVMSymbolizer: FrameSymbolizer {
  private var cache: [String: [UInt64: (symbol: String?, file: String?, line: Int?)]] = [:]
  private var missingModules: Set<String> = []
  public private(set) var problems: [String] = []
  private let symbolizerPath: String?
  private let demanglerPath: String?

  /// Finds the tools on `PATH` (or takes explicit paths, for tests).
  public init(symbolizerPath: String? = nil, demanglerPath: String? = nil) {
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
      guard frame.file == nil, let module = frame.module, let offset = frame.offset else {
        continue
      }
      let key = lookupOffset(index, offset)
      if cache[module]?[key] == nil && !missingModules.contains(module) {
        wanted[module, default: []].insert(key)
      }
    }
    for (module, offsets) in wanted.sorted(by: { $0.key < $1.key }) {
      guard FileManager.default.isReadableFile(atPath: module) else {
        missingModules.insert(module)
        problems.append(
          "--symbolize: \(module) is not on this machine; its frames are left as recorded")
        continue
      }
      resolve(module, offsets.sorted(), with: symbolizerPath)
    }
    return frames.enumerated().map { index, frame in
      guard frame.file == nil, let module = frame.module, let offset = frame.offset,
        let found = cache[module]?[lookupOffset(index, offset)]
      else { return frame }
      var resolved = frame
      resolved.symbol = frame.symbol ?? found.symbol
      resolved.file = found.file
      resolved.line = found.line
      return resolved
    }
  }

  private mutating func resolve(_ module: String, _ offsets: [UInt64], with tool: String) {
    let arguments =
      ["--output-style=JSON", "--functions=linkage", "--obj=\(module)"]
      + offsets.map { "0x" + String($0, radix: 16) }
    guard let output = Self.run(tool, arguments) else {
      problems.append("--symbolize: llvm-symbolizer failed on \(module)")
      missingModules.insert(module)
      return
    }
    // One JSON array for all the addresses: {"Address": "0x…", "Symbol": [{…}, …]} each,
    // inlined frames first; the first entry names the innermost function.
    var results: [UInt64: (symbol: String?, file: String?, line: Int?)] = [:]
    var mangled: [String] = []
    let entries =
      (try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]) ?? []
    for entry in entries {
      guard let address = (entry["Address"] as? String).flatMap(Self.hex),
        let symbols = entry["Symbol"] as? [[String: Any]], let first = symbols.first
      else { continue }
      func known(_ text: String?) -> String? {
        guard let text, !text.isEmpty, text != "??" else { return nil }
        return text
      }
      let function = known(first["FunctionName"] as? String)
      let file = known(first["FileName"] as? String)
      let lineNumber = (first["Line"] as? Int).flatMap { $0 == 0 ? nil : $0 }
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
    guard let output = Self.run(demanglerPath, ["--compact"] + unique) else { return [:] }
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
    var result: [String: String] = [:]
    for (name, line) in zip(unique, lines) where !line.isEmpty { result[name] = String(line) }
    return result
  }

  /// Runs `tool` with `arguments` (no shell) and returns its standard output, or `nil` when
  /// it could not run or failed.
  static func run(_ tool: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      return nil
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: data, as: UTF8.self)
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
