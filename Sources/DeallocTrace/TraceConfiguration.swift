import Glibc

/// Where and how deeply to record, as the environment asks.
///
/// - `DEALLOCTRACE_LOG=PATH`: `%p` becomes the pid; an existing directory gets
///   `dealloctrace.<pid>.jsonl` inside it.
/// - `DEALLOCTRACE=1` alone: `./dealloctrace.<pid>.jsonl`.
/// - `DEALLOCTRACE_FRAMES=N`: backtrace depth, 0 turns backtraces off.
/// - `DEALLOCTRACE_HOLDERS=1`: record who still holds each survivor (`holders` records).
struct TraceConfiguration: Equatable, Sendable {
  /// 32 frames cover a UI call path from the run loop to the enqueue; `unw_backtrace` costs
  /// about 8 ns a frame here, so deeper stacks mostly add cost for frames nobody reads.
  static let defaultFrames = 32
  /// The most frames a backtrace can hold (the per-thread scratch array's size).
  static let maxFrames = 256

  var path: String
  var frames: Int
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
    let holders = holders(from: environment)
    let fileName = "dealloctrace.\(pid).jsonl"
    if let requested = environment["DEALLOCTRACE_LOG"], !requested.isEmpty {
      let path = requested.replacingPercentP(with: pid)
      if isDirectory(path) {
        let separator = path.hasSuffix("/") ? "" : "/"
        return TraceConfiguration(
          path: path + separator + fileName, frames: frames, holders: holders)
      }
      return TraceConfiguration(path: path, frames: frames, holders: holders)
    }
    if let flag = environment["DEALLOCTRACE"], !flag.isEmpty, flag != "0" {
      return TraceConfiguration(path: "./" + fileName, frames: frames, holders: holders)
    }
    return nil
  }

  /// Whether `DEALLOCTRACE_HOLDERS` asks for holders: set, not empty and not `0`, as
  /// `DEALLOCTRACE` is read.
  static func holders(from environment: [String: String]) -> Bool {
    guard let flag = environment["DEALLOCTRACE_HOLDERS"] else { return false }
    return !flag.isEmpty && flag != "0"
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
    for name in ["DEALLOCTRACE_LOG", "DEALLOCTRACE", "DEALLOCTRACE_FRAMES", "DEALLOCTRACE_HOLDERS"]
    {
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
