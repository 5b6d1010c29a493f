import Glibc

/// Where and how deeply to record, as the environment asks.
///
/// - `DEALLOCTRACE_LOG=PATH`: `%p` becomes the pid; an existing directory gets
///   `dealloctrace.<pid>.jsonl` inside it.
/// - `DEALLOCTRACE=1` alone: `./dealloctrace.<pid>.jsonl`.
/// - `DEALLOCTRACE_FRAMES=N`: backtrace depth, 0 turns backtraces off.
/// - `DEALLOCTRACE_MAX_SIZE=SIZE`: the most the log file grows to (`defaultMaxSize`).
/// - `DEALLOCTRACE_HOLDERS=1`: record who still holds each survivor (`holders` records).
struct TraceConfiguration: Equatable, Sendable {
  /// 32 frames cover a UI call path from the run loop to the enqueue; every frame has a cost
  /// (`dealloctrace-bench tracing`), so deeper stacks mostly add cost for frames nobody reads.
  static let defaultFrames = 32
  /// The most frames a backtrace can hold (the per-thread scratch array's size).
  static let maxFrames = 256

  /// The default `DEALLOCTRACE_MAX_SIZE`, 1 GiB. Why a limit by default: a busy program
  /// writes about 18 MB of log a second, and a long-running one traced and forgotten would
  /// fill its disk. Why this one: it holds tens of minutes of an ordinary test run and
  /// millions of objects (about 200 bytes each with stacks interned), a report reads it in a
  /// few seconds, and it is small next to a CI runner's disk. The trade-off: a long, busy
  /// run is cut, and the objects after the cut have unknown fates (the report says so); set
  /// a larger size, or `0`/`unlimited`, for such runs.
  static let defaultMaxSize: UInt64 = 1 << 30

  var path: String
  var frames: Int
  /// The most the log file grows to; nil for no limit.
  var maxSize: UInt64? = TraceConfiguration.defaultMaxSize
  /// A directory to create (mode 0700, parents too) before opening `path`: the one a
  /// `DEALLOCTRACE_LOG` ending in `/` names, or a `%p` pattern's directory, when missing.
  var directoryToCreate: String? = nil
  /// Whether the session records holders. The registry itself was started as the process
  /// loaded, by `CHolders`' constructor reading the same variable.
  var holders = false

  /// Reads the configuration; nil when tracing is not asked for. Problems with a value
  /// (not a number) are reported through `warn` and the default is used.
  static func fromEnvironment(
    _ environment: [String: String], pid: Int32,
    isDirectory: (String) -> Bool = TraceConfiguration.isDirectory,
    warn: (DeallocTraceError) -> Void = { StandardError.write($0.description) }
  ) -> TraceConfiguration? {
    let frames = frames(from: environment, warn: warn)
    let maxSize = maxSize(from: environment, warn: warn)
    let holders = holders(from: environment)
    let fileName = "dealloctrace.\(pid).jsonl"
    if let requested = environment["DEALLOCTRACE_LOG"], !requested.isEmpty {
      let path = requested.replacingPercentP(with: pid)
      if isDirectory(path) {
        let separator = path.hasSuffix("/") ? "" : "/"
        return TraceConfiguration(
          path: path + separator + fileName, frames: frames, maxSize: maxSize, holders: holders)
      }
      var configuration = TraceConfiguration(
        path: path, frames: frames, maxSize: maxSize, holders: holders)
      if path.hasSuffix("/") {
        // A directory by its spelling: made, so that a CI job needs no `mkdir` first.
        configuration.path = path + fileName
        configuration.directoryToCreate = path
      } else if requested.contains("%p"), let slash = path.lastIndex(of: "/"),
        slash != path.startIndex, !isDirectory(String(path[..<slash]))
      {
        // A per-process pattern names a directory of logs, made like one.
        configuration.directoryToCreate = String(path[..<slash])
      }
      return configuration
    }
    if let flag = environment["DEALLOCTRACE"], !flag.isEmpty, flag != "0" {
      return TraceConfiguration(
        path: "./" + fileName, frames: frames, maxSize: maxSize, holders: holders)
    }
    return nil
  }

  /// Whether `DEALLOCTRACE_HOLDERS` asks for holders: set, not empty and not `0`, as
  /// `DEALLOCTRACE` is read.
  static func holders(from environment: [String: String]) -> Bool {
    guard let flag = environment["DEALLOCTRACE_HOLDERS"] else { return false }
    return !flag.isEmpty && flag != "0"
  }

  /// The size `DEALLOCTRACE_MAX_SIZE` asks for, else `defaultMaxSize`; nil for no limit
  /// (`0`, `none` or `unlimited`). A value that does not parse is reported through `warn`
  /// and the default is used.
  static func maxSize(
    from environment: [String: String],
    warn: (DeallocTraceError) -> Void = { StandardError.write($0.description) }
  ) -> UInt64? {
    guard let text = environment["DEALLOCTRACE_MAX_SIZE"] else { return defaultMaxSize }
    guard let size = parseSize(String(text.trimmingSpaces)) else {
      warn(
        .ignoredSetting(
          name: "DEALLOCTRACE_MAX_SIZE", value: text,
          expected: "a size (bytes, or with a unit: 500MB, 1GiB; 0 or unlimited for none)",
          instead: "the default cap, \(defaultMaxSize >> 30) GiB (\(defaultMaxSize) bytes),"))
      return defaultMaxSize
    }
    return size == 0 ? nil : size
  }

  /// Parses `500MB`, `1GiB`, `1.5G`, `4096`: an integer or decimal number and an optional
  /// unit, case-insensitive: `B`; `K`, `KB`, `M`, `MB`, `G`, `GB`, `T`, `TB` (powers of
  /// 1000, as disks are sold); `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024). `0`, `none` and
  /// `unlimited` give 0 (no limit). Nil when it does not parse or does not fit 64 bits.
  static func parseSize(_ text: String) -> UInt64? {
    let lowered = text.lowercased()
    if lowered == "none" || lowered == "unlimited" { return 0 }
    let number = lowered.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
    let unit = lowered.dropFirst(number.count).drop { $0 == " " }
    let multipliers: [Substring: Double] = [
      "": 1, "b": 1,
      "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
      "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
    ]
    guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, number.first != ".",
      let value = Double(number), let multiplier = multipliers[unit]
    else { return nil }
    let bytes = (value * multiplier).rounded(.down)
    guard bytes < Double(UInt64.max) else { return nil }
    return UInt64(bytes)
  }

  /// Makes `path` and its missing parents with mode 0700 (the logs are private).
  static func makeDirectory(_ path: String) throws(DeallocTraceError) {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
      prefix += component
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        throw .cannotCreateDirectory(path: path, errno: errno)
      }
      prefix += "/"
    }
    guard isDirectory(path) else { throw .cannotCreateDirectory(path: path, errno: ENOTDIR) }
  }

  /// The backtrace depth `DEALLOCTRACE_FRAMES` asks for, else the default. A value that is
  /// not a number ≥ 0 is reported through `warn` and the default is used.
  static func frames(
    from environment: [String: String],
    warn: (DeallocTraceError) -> Void = { StandardError.write($0.description) }
  ) -> Int {
    guard let text = environment["DEALLOCTRACE_FRAMES"] else { return defaultFrames }
    guard let value = Int(text.trimmingSpaces), value >= 0 else {
      warn(.badSetting(name: "DEALLOCTRACE_FRAMES", value: text, expected: "a number ≥ 0"))
      return defaultFrames
    }
    return min(value, maxFrames)
  }

  /// The process environment, read once with `getenv` (no Foundation needed).
  static func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    for name in [
      "DEALLOCTRACE_LOG", "DEALLOCTRACE", "DEALLOCTRACE_FRAMES", "DEALLOCTRACE_MAX_SIZE",
      "DEALLOCTRACE_HOLDERS",
    ] {
      if let value = getenv(name) {
        result[name] = String(cString: value)
      }
    }
    return result
  }

  static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
  }
}

extension String {
  fileprivate var trimmingSpaces: Substring {
    var text = self[...]
    while text.first == " " { text.removeFirst() }
    while text.last == " " { text.removeLast() }
    return text
  }

  fileprivate func replacingPercentP(with pid: Int32) -> String {
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: "%p") {
      result += rest[..<range.lowerBound]
      result += String(pid)
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
