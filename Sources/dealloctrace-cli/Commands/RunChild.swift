import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs `run`'s command as a child with the terminal's standard streams, and waits for it.
///
/// While it waits, `run` ignores SIGINT and SIGQUIT as a shell does for a foreground job:
/// the child, in the same process group, gets the terminal's Ctrl-C and dies (or not) by
/// itself, and `run` then still reads what it recorded.
enum RunChild {
  /// The command's exit status, or 128+N when signal N ended it.
  static func run(_ command: [String], environment: [String: String]) throws(UsageError) -> Int32 {
    let previousInterrupt = signal(SIGINT, SIG_IGN)
    let previousQuit = signal(SIGQUIT, SIG_IGN)
    defer {
      signal(SIGINT, previousInterrupt)
      signal(SIGQUIT, previousQuit)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGQUIT)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

    let arguments = command.map { strdup($0) } + [nil]
    let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in arguments + variables { free(pointer) }
    }
    var pid = pid_t()
    let result = posix_spawnp(&pid, command[0], nil, &attributes, arguments, variables)
    guard result == 0 else {
      throw UsageError("cannot run \(command[0]): \(String(cString: strerror(result)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { return 1 }
    }
    let signalNumber = status & 0x7f
    return signalNumber == 0 ? (status >> 8) & 0xff : 128 + signalNumber
  }
}
