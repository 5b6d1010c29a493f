import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process for a test to run: what to execute, in which environment, and where its
/// streams go. Every child runner of the tests is this one, so that every child gets the
/// same cleared environment, drained pipes and default signals.
///
/// It spawns with `posix_spawn` rather than `Foundation.Process`, so that the child's
/// signals are reset to their defaults and unblocked (a test runner often ignores SIGPIPE,
/// and an ignored signal stays ignored across `exec`), and so that a test can tell an exit
/// status from a signal. The trade-off is a little POSIX plumbing here, once.
public struct ChildProcess: Sendable {
  /// Where the child's standard error goes.
  public enum ErrorStream: Sendable {
    /// A pipe of its own, drained while the child runs (`ChildRun.standardError`).
    case separate
    /// The standard output pipe, interleaved as written.
    case mergedIntoOutput
    /// `/dev/null`.
    case discarded
    /// This process's standard error (what the child says shows in the test's log).
    case inherited
    /// A pseudo-terminal of its own, read while the child runs (`ChildRun.standardError`),
    /// so that `isatty(2)` holds in the child as at a person's terminal. The terminal is raw:
    /// what the child writes arrives unchanged (no `\n` becomes `\r\n`).
    case terminal
    /// That terminal for standard output too, as at a person's terminal with nothing
    /// redirected: both streams arrive there, in `ChildRun.standardError`, and the output
    /// pipe stays empty.
    case terminalWithOutput
  }

  public var executable: URL
  public var arguments: [String]
  /// The child's whole environment: by default this process's, without the tracing
  /// variables (`ChildEnvironment.inherited()`).
  public var environment: [String: String]
  /// The working directory; nil keeps this process's.
  public var directory: URL?
  /// What the child reads on standard input; nil gives it `/dev/null`.
  public var input: Data?
  public var standardError: ErrorStream

  public init(
    _ executable: URL, _ arguments: [String] = [],
    environment: [String: String] = ChildEnvironment.inherited(), directory: URL? = nil,
    input: Data? = nil, standardError: ErrorStream = .separate
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.directory = directory
    self.input = input
    self.standardError = standardError
  }

  /// Runs the child to its end; one still running after `timeout` is killed with SIGKILL
  /// (a hang fails its test instead of the whole run), and the run says so (`timedOut`).
  public func run(timeout: Duration = .seconds(120)) throws -> ChildRun {
    try start().wait(timeout: timeout)
  }

  /// Starts the child and returns at once; its output pipes are read while it runs.
  public func start() throws -> RunningChild {
    // Every descriptor made here is close-on-exec, so that a child spawned meanwhile by
    // another thread never holds a pipe's write end open (its reader would wait for it).
    let output = try PipeEnds()
    let error = standardError == .separate ? try PipeEnds() : nil
    let onTerminal = standardError == .terminal || standardError == .terminalWithOutput
    let terminal = onTerminal ? try PseudoTerminal() : nil
    let stdin = input == nil ? nil : try PipeEnds()

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // dup2 clears close-on-exec on the copy, so the child keeps exactly 0, 1 and 2.
    if let stdin {
      posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
    } else {
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_adddup2(
      &actions, standardError == .terminalWithOutput ? terminal!.secondary : output.write, 1)
    switch standardError {
    case .separate: posix_spawn_file_actions_adddup2(&actions, error!.write, 2)
    case .mergedIntoOutput: posix_spawn_file_actions_adddup2(&actions, output.write, 2)
    case .discarded: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    case .inherited: break
    case .terminal, .terminalWithOutput:
      posix_spawn_file_actions_adddup2(&actions, terminal!.secondary, 2)
    }
    if let directory {
      _ = GNU.addChdir(&actions, directory.path)
    }
    // Nothing else of this process reaches the child: a descriptor that another test opened
    // without close-on-exec (a script it is writing, say) would otherwise live on in the
    // child, and that test's exec of its script would fail with ETXTBSY.
    _ = GNU.addCloseFrom(&actions, 3)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigfillset(&defaults)
    sigdelset(&defaults, SIGKILL)
    sigdelset(&defaults, SIGSTOP)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

    let argv = [executable.path] + arguments
    let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    let cEnvironment: [UnsafeMutablePointer<CChar>?] =
      environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in cArguments + cEnvironment { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(
      &pid, executable.path, &actions, &attributes, cArguments, cEnvironment)
    // The child's ends belong to the child alone: a copy kept here would hold its output
    // pipes open past its exit.
    close(output.write)
    if let error { close(error.write) }
    if let terminal { close(terminal.secondary) }
    if let stdin { close(stdin.read) }
    guard status == 0 else {
      close(output.read)
      if let error { close(error.read) }
      if let terminal { close(terminal.primary) }
      if let stdin { close(stdin.write) }
      throw ChildProcessError(executable: executable.path, code: status)
    }
    if let stdin, let input {
      InputFeeder.feed(input, to: stdin.write)
    }
    return RunningChild(
      pid: pid, executable: executable.lastPathComponent,
      output: PipeDrain(FileHandle(fileDescriptor: output.read, closeOnDealloc: true)),
      error: error.map { PipeDrain(FileHandle(fileDescriptor: $0.read, closeOnDealloc: true)) }
        ?? terminal.map { PipeDrain(terminalPrimary: $0.primary) })
  }
}

/// `posix_spawn` failed: the executable is missing, or not executable.
public struct ChildProcessError: Error, CustomStringConvertible {
  public var executable: String
  public var code: Int32
  public var description: String {
    "cannot run \(executable): \(String(cString: strerror(code)))"
  }
}

/// Both ends of a close-on-exec pipe.
private struct PipeEnds {
  let read: Int32
  let write: Int32

  init() throws {
    var ends: [Int32] = [-1, -1]
    guard GNU.pipe2(&ends, O_CLOEXEC) == 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE)
    }
    read = ends[0]
    write = ends[1]
  }
}

/// A pseudo-terminal pair: the primary side (POSIX's "master") that the test reads, and the
/// secondary side (the "slave") that the child writes to as its terminal. Both are
/// close-on-exec, like the pipes; the secondary is not made the child's controlling terminal
/// (`O_NOCTTY`), which `isatty` does not need.
private struct PseudoTerminal {
  let primary: Int32
  let secondary: Int32

  init() throws {
    let primary = GNU.posixOpenpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard primary >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    var name = [CChar](repeating: 0, count: 128)
    var secondary: Int32 = -1
    if GNU.grantpt(primary) == 0, GNU.unlockpt(primary) == 0,
      GNU.ptsnameR(primary, &name, name.count) == 0
    {
      secondary = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
    }
    guard secondary >= 0 else {
      let code = errno
      close(primary)
      throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
    // Raw: no output processing, so the bytes read are the bytes written.
    var settings = termios()
    tcgetattr(secondary, &settings)
    cfmakeraw(&settings)
    tcsetattr(secondary, TCSANOW, &settings)
    self.primary = primary
    self.secondary = secondary
  }
}

/// Writes a child's standard input from a thread of its own, so that a child blocked on a
/// full output pipe cannot deadlock the test; SIGPIPE is blocked there, so a child that
/// exits without reading only ends the writing.
private enum InputFeeder {
  static func feed(_ data: Data, to descriptor: Int32) {
    let thread = Thread {
      var blocked = sigset_t()
      sigemptyset(&blocked)
      sigaddset(&blocked, SIGPIPE)
      pthread_sigmask(SIG_BLOCK, &blocked, nil)
      data.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
          let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
          if written < 0 && errno == EINTR { continue }
          if written <= 0 { break }
          offset += written
        }
      }
      close(descriptor)
    }
    thread.start()
  }
}

/// The glibc functions this file needs that Swift's Glibc module does not declare (it is
/// built without `_GNU_SOURCE` or `_XOPEN_SOURCE`): looked up once by name.
private enum GNU {
  typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
  typealias AddCloseFrom =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
  typealias AddChdir =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) ->
    Int32
  typealias OnDescriptor = @convention(c) (Int32) -> Int32
  typealias PtsnameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

  /// `posix_openpt(3)`, `grantpt(3)`, `unlockpt(3)` and `ptsname_r(3)`: a pseudo-terminal.
  static let posixOpenpt = unsafeBitCast(symbol("posix_openpt"), to: OnDescriptor.self)
  static let grantpt = unsafeBitCast(symbol("grantpt"), to: OnDescriptor.self)
  static let unlockpt = unsafeBitCast(symbol("unlockpt"), to: OnDescriptor.self)
  static let ptsnameR = unsafeBitCast(symbol("ptsname_r"), to: PtsnameR.self)

  /// `pipe2(2)`: a pipe whose ends are close-on-exec from the start, with no window in
  /// which another thread's spawn could inherit them.
  static let pipe2 = unsafeBitCast(symbol("pipe2"), to: Pipe2.self)
  /// `posix_spawn_file_actions_addchdir_np(3)` (glibc 2.29).
  static let addChdir = unsafeBitCast(
    symbol("posix_spawn_file_actions_addchdir_np"), to: AddChdir.self)
  /// `posix_spawn_file_actions_addclosefrom_np(3)` (glibc 2.34).
  static let addCloseFrom = unsafeBitCast(
    symbol("posix_spawn_file_actions_addclosefrom_np"), to: AddCloseFrom.self)

  private static func symbol(_ name: String) -> UnsafeMutableRawPointer {
    guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
      fatalError("glibc has no \(name)")
    }
    return address
  }
}
