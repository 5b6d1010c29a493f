import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a helper tool (`llvm-symbolizer`, `swift-demangle`) with a time limit, a memory
/// limit, and a tie to its parent, so that what a log names cannot make it hang or eat the
/// machine: `"mod":"/dev/zero"` once made llvm-symbolizer grow to 23 GB, and killing
/// `dealloctrace` left it running.
///
/// How: the tool is started through a launcher, a program that understands
/// ``launcherCommand`` (the `dealloctrace` CLI itself, re-executed), which in the fresh
/// process asks the kernel to kill it when its parent dies (`PR_SET_PDEATHSIG`), sets
/// `RLIMIT_AS` and `RLIMIT_CPU`, and `exec`s the tool, so the limits hold from the tool's
/// first instruction. Why not `fork` here: a forked child of a multithreaded Swift process
/// may only call async-signal-safe functions, which rules out the runtime; and
/// `posix_spawn` has no attribute for either. The parent also reads the tool's output with
/// a wall-clock deadline and kills it when the deadline passes. Without a launcher (a
/// library user) only the deadline applies; the trade-off is documented at ``run(_:_:limits:launcher:)``.
public enum BoundedChild {
  /// The limits for one run.
  public struct Limits: Sendable, Equatable {
    /// Wall-clock seconds for the whole run (and CPU seconds, under a launcher).
    public var seconds: Int
    /// The address-space limit, in bytes (under a launcher).
    public var memoryBytes: UInt64
    /// Output beyond this is not read: the tool is killed.
    public var maximumOutputBytes: Int

    /// Two minutes and 4 GiB: far more than llvm-symbolizer needs for one module's
    /// addresses (tens of MB for a large Swift binary with DWARF), far less than a machine.
    public init(
      seconds: Int = 120, memoryBytes: UInt64 = 4 << 30, maximumOutputBytes: Int = 256 << 20
    ) {
      self.seconds = seconds
      self.memoryBytes = memoryBytes
      self.maximumOutputBytes = maximumOutputBytes
    }
  }

  /// How a run ended.
  ///
  /// Closed: a run ends with output, a failure or the deadline.
  public enum Outcome: Sendable, Equatable {
    /// The tool exited with status 0; its standard output.
    case output(String)
    /// The tool could not start, was killed by a signal, or exited with another status.
    case failed
    /// The deadline passed (or the output limit): the tool was killed.
    case timedOut
  }

  /// The first argument that makes a launcher apply the limits and exec the tool.
  public static let launcherCommand = "__bounded-exec"

  /// Runs `tool` with `arguments` (never through a shell) under `limits`: through
  /// `launcher` when given, so that memory and CPU are limited and the tool dies with this
  /// process; without one, only the wall-clock deadline holds.
  public static func run(
    _ tool: String, _ arguments: [String], limits: Limits = Limits(), launcher: String? = nil
  ) -> Outcome {
    let process = Process()
    if let launcher {
      process.executableURL = URL(fileURLWithPath: launcher)
      process.arguments =
        [
          launcherCommand, String(getpid()), String(limits.memoryBytes), String(limits.seconds),
          tool,
        ] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = arguments
    }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      return .failed
    }
    let fd = pipe.fileHandleForReading.fileDescriptor
    let deadline = ContinuousClock.now + .seconds(limits.seconds)
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var timedOut = false
    while true {
      let left = deadline - ContinuousClock.now
      let milliseconds =
        left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
      if milliseconds <= 0 || output.count > limits.maximumOutputBytes {
        timedOut = true
        break
      }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, Int32(min(milliseconds, 60_000)))
      if ready < 0 && errno != EINTR { break }
      if ready <= 0 { continue }
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        break
      }
      if count == 0 { break }
      output += chunk[..<count]
    }
    if timedOut { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    if timedOut { return .timedOut }
    guard process.terminationReason == .exit, process.terminationStatus == 0 else { return .failed }
    return .output(String(decoding: output, as: UTF8.self))
  }

  /// The launcher's side, in the process started by ``run(_:_:limits:launcher:)``:
  /// `arguments` are what follows ``launcherCommand`` (parent pid, memory bytes, CPU
  /// seconds, tool, its arguments). Ties the process to its parent, applies the limits and
  /// execs the tool; never returns (exit status 127 when it cannot).
  public static func execBounded(_ arguments: [String]) -> Never {
    guard arguments.count >= 4, let parent = pid_t(arguments[0]),
      let memory = rlim_t(arguments[1]), let seconds = rlim_t(arguments[2])
    else { _exit(127) }
    // PR_SET_PDEATHSIG (1): SIGKILL when the parent dies. Glibc's `prctl` is variadic, which
    // Swift does not import; the fixed-argument form below is its x86_64 and arm64 ABI.
    typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "prctl") else { _exit(127) }
    let prctl = unsafeBitCast(symbol, to: Prctl.self)
    guard prctl(1, UInt(SIGKILL), 0, 0, 0) == 0 else { _exit(127) }
    // The parent may have died before the tie was made.
    guard getppid() == parent else { _exit(127) }
    var memoryLimit = rlimit(rlim_cur: memory, rlim_max: memory)
    var cpuLimit = rlimit(rlim_cur: seconds, rlim_max: seconds + 1)
    guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &memoryLimit) == 0,
      setrlimit(__rlimit_resource_t(RLIMIT_CPU.rawValue), &cpuLimit) == 0
    else { _exit(127) }
    let argv = arguments[3...].map { strdup($0) } + [nil]
    execv(arguments[3], argv)
    _exit(127)
  }
}
