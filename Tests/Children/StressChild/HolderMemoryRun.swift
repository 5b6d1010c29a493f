import DeallocQueue
import DeallocTrace

#if canImport(Glibc)
  import Glibc
#endif

/// What the `holder-memory` mode does (run with `DEALLOCTRACE_LOG` and
/// `DEALLOCTRACE_HOLDERS=1`): a survivor held by a global is released from a queue while the
/// address space is limited to what the process maps plus `headroom` (far less than a scan
/// reserves), so that the scan after its release runs out of memory; the limit is lifted
/// before the session ends, whose scan then works. Prints `holder-memory done`.
enum HolderMemoryRun {
  static let headroom: UInt64 = 48 << 20

  static func run() -> Int32 {
    let queue = DeallocQueue(label: "held", delay: .seconds(60))
    _ = queue.pendingCount  // tracing starts from the environment here
    kept = Survivor()
    var handed: AnyObject? = kept
    queue.releaseInBackground(&handed)
    var saved = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &saved)
    var limited = saved
    limited.rlim_cur = rlim_t(LimitedRun.addressSpaceUsed() + headroom)
    guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limited) == 0 else {
      ChildOutput.error("holder-memory: cannot set RLIMIT_AS")
      return 70
    }
    queue.drain()
    setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &saved)
    ChildOutput.line("holder-memory done")
    return 0
  }

  private final class Survivor {
    var value = 1
  }

  nonisolated(unsafe) private static var kept: Survivor?
}
