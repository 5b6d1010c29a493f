import DeallocAnalysis
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `dealloctrace run [options] -- COMMAND [ARGS...]`: runs an unchanged Swift program (or
/// `swift test`) with the preloadable recorder, then gates on what it recorded as `check`
/// does.
///
/// The recorder is `libDeallocTracePreload.so` beside this executable, loaded with
/// `LD_PRELOAD`, which every child process inherits; the library itself decides in each
/// process whether to record (see Sources/DeallocPreload). The trade-off of preloading: a
/// static binary or a setuid program cannot be recorded this way; `run` says so in one line
/// and runs it unrecorded, unless `--strict`.
enum RunCommand: Command {
  static let name = "run"
  static let summary =
    "Run a Swift program (or 'swift test') with the recorder preloaded, then gate."

  static let help = """
    USAGE: dealloctrace run [options] -- COMMAND [ARGS...]

    Runs COMMAND with the recorder preloaded (LD_PRELOAD, inherited by every child), so
    that any Swift program is recorded without a dependency on this package: at its exit,
    each Swift process runs a whole-process leak census into a log of its own. The Swift
    toolchain's own programs (swift, swift-build, swift-frontend, swift-driver, clang, the
    linkers) are never recorded, so 'dealloctrace run -- swift test' records the test
    bundle. A program that links DeallocTrace records through its own recorder, once.
    Then prints the verdict of 'check' over the logs.

    OPTIONS:
      --leaks                   the whole-process leak census at exit (the default)
      --holders                 also start the holder machinery (DEALLOCTRACE_HOLDERS) in
                                programs that link DeallocTrace
      --alloc-stacks            allocation stacks (DEALLOCTRACE_ALLOC_STACKS=1): each leak
                                of the census says where its root was allocated
      --log DIR                 where the logs go: a missing or empty directory (default:
                                a fresh directory under .dealloctrace/)
      --only GLOB               record only in processes whose executable's file name
                                matches GLOB (* ? [a-z])
      --no-gate                 exit with the command's own status, whatever the verdict
      --strict                  refuse to run a command that cannot be recorded (exit 2),
                                and exit 2 when a process refused to record

    Every option of 'check' is accepted and passed on (--max-*, --baseline,
    --suppressions, --junit, --github, --format, -o, --symbolize, --stuck-after).

    EXIT STATUS:
      the status of 'check' over the logs when its gate fails (1) or cannot read them (2);
      otherwise the command's own status (128+N when a signal N ended it); with --no-gate,
      always the command's own status. 127 when COMMAND is not found.
    """

  static let spec: Arguments.Spec = {
    var spec = CheckCommand.spec
    spec.valued["--log"] = "log"
    spec.valued["--only"] = "only"
    for flag in ["leaks", "holders", "alloc-stacks", "no-gate", "strict"] {
      spec.flags["--" + flag] = flag
    }
    return spec
  }()

  /// The options of `run` itself, never passed on to `check`.
  private static let ownOptions: Set<String> = [
    "--log", "--only", "--leaks", "--holders", "--alloc-stacks", "--no-gate", "--strict",
  ]

  static func run(_ arguments: [String]) throws -> ExitStatus {
    guard let separator = arguments.firstIndex(of: "--") else {
      throw UsageError("run needs '--' before the command: dealloctrace run [options] -- COMMAND")
    }
    let options = Array(arguments[..<separator])
    let command = Array(arguments[(separator + 1)...])
    let parsed = try Arguments(options, spec: spec)
    guard parsed.positional.isEmpty else {
      throw UsageError("unexpected argument '\(parsed.positional[0])' before '--'")
    }
    guard let program = command.first else { throw UsageError("run needs a command after '--'") }
    if parsed.flag("leaks") && parsed.flag("holders") {
      throw UsageError("--leaks and --holders cannot both be given")
    }
    let strict = parsed.flag("strict")
    let library = try preloadLibrary()

    var recorded = true
    switch RunTarget.check(program) {
    case .notFound:
      StandardError.line("command not found: \(program)", command: name)
      exit(127)
    case .refused(let reason):
      guard !strict else { throw UsageError("cannot record \(program): \(reason) (--strict)") }
      StandardError.line("not recording: \(reason); running it unrecorded", command: name)
      recorded = false
    case .recordable:
      break
    }
    let logDirectory = try RunLogDirectory.prepare(parsed.value("log"))
    let environment = childEnvironment(
      parsed, recorded: recorded, logDirectory: logDirectory, library: library)
    let commandStatus = try RunChild.run(command, environment: environment)

    let refusals = RunLogDirectory.refusals(in: logDirectory)
    if strict && !refusals.isEmpty {
      StandardError.line(
        "\(refusals.count) process(es) refused to record (--strict): " + refusals[0], command: name)
      return .unusable
    }
    guard recorded, RunLogDirectory.hasLogs(logDirectory) else {
      if recorded {
        StandardError.line(
          "no Swift process was recorded (a command that ran no Swift program, or ran only"
            + " the toolchain's)", command: name)
      }
      if strict { return .unusable }
      exit(commandStatus)
    }
    StandardError.line("logs in \(logDirectory)", command: name)
    let checkArguments = forwardedArguments(options) + [logDirectory]
    let gate = try CheckCommand.run(checkArguments)
    if parsed.flag("no-gate") || gate == .success { exit(commandStatus) }
    return gate
  }

  /// This process's environment with the recorder's variables of the caller's shell cleared
  /// (so that they cannot contradict `run`'s options), and, when the command is recorded, the
  /// preload and the log directory set.
  private static func childEnvironment(
    _ parsed: Arguments, recorded: Bool, logDirectory: String, library: String
  ) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for variable in [
      "DEALLOCTRACE_LEAKS", "DEALLOCTRACE_HOLDERS", "DEALLOCTRACE", "DEALLOCTRACE_ONLY",
      "DEALLOCTRACE_ALLOC_STACKS",
    ] {
      environment[variable] = nil
    }
    guard recorded else { return environment }
    environment["DEALLOCTRACE_PRELOAD"] = parsed.flag("holders") ? "holders" : "leaks"
    environment["DEALLOCTRACE_LOG"] = logDirectory + "/"
    environment["DEALLOCTRACE_RUN_PID"] = String(getpid())
    environment["DEALLOCTRACE_ONLY"] = parsed.value("only")
    if parsed.flag("alloc-stacks") { environment["DEALLOCTRACE_ALLOC_STACKS"] = "1" }
    let existing = environment["LD_PRELOAD"].map { $0.isEmpty ? "" : ":" + $0 } ?? ""
    environment["LD_PRELOAD"] = library + existing
    return environment
  }

  /// The preload library: `DEALLOCTRACE_PRELOAD_LIBRARY`, else beside this executable.
  private static func preloadLibrary() throws(UsageError) -> String {
    let fileName = "libDeallocTracePreload.so"
    let path: String
    if let given = ProcessInfo.processInfo.environment["DEALLOCTRACE_PRELOAD_LIBRARY"],
      !given.isEmpty
    {
      path = given
    } else {
      guard let executable = selfExecutable else {
        throw UsageError("cannot find this executable's directory (/proc/self/exe)")
      }
      path = (executable as NSString).deletingLastPathComponent + "/" + fileName
    }
    guard access(path, R_OK) == 0 else {
      throw UsageError(
        "the preload library \(path) is missing; build it with"
          + " 'swift build --product DeallocTracePreload'")
    }
    return path
  }

  /// The options given to `run` that are `check`'s, in their order.
  private static func forwardedArguments(_ options: [String]) -> [String] {
    var forwarded: [String] = []
    var index = 0
    while index < options.count {
      let option = options[index]
      let name = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
      let takesValue = spec.valued[name] != nil && !option.contains("=")
      let count = takesValue ? 2 : 1
      if !ownOptions.contains(name) {
        forwarded.append(contentsOf: options[index..<min(options.count, index + count)])
      }
      index += count
    }
    return forwarded
  }
}
