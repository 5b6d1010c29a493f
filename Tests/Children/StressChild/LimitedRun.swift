import DeallocQueue
import DeallocTrace

#if canImport(Glibc)
  import Glibc
#endif

/// What the `limited` mode does: FeedDemo's close under an address-space limit, then a
/// bounded wait for the shared queue's timer to drain it (201 objects handed over, their
/// deaths watched through weak references).
///
/// `limited HEADROOM_MIB [holders]` measures what this process maps, sets `RLIMIT_AS` to that
/// plus the headroom (as `ulimit -v` would) and executes itself again as `limited-run`, so
/// that the limit holds from the start, load-time constructors included; with `holders`,
/// `DEALLOCTRACE_HOLDERS=1` is set for that run only (here it would have taken its memory
/// before the measure). The run prints `limited drained=N of 201`, and `limited not drained`
/// when the wait's bound ran out.
enum LimitedRun {
  /// How many rounds of `pollMicroseconds` the wait lasts at most: far beyond the queue's
  /// 100 ms delay on any machine; a queue that never drains fails the run at the bound.
  static let pollRounds = 1_000
  static let pollMicroseconds: UInt32 = 10_000

  static func limitAndRun(headroom: UInt64, holders: Bool) -> Int32 {
    let start = addressSpaceUsed()
    var limit = rlimit(rlim_cur: rlim_t(start + headroom), rlim_max: rlim_t(start + headroom))
    guard start > 0, setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 else {
      ChildOutput.error("limited: cannot set RLIMIT_AS")
      return 70
    }
    ChildOutput.line("limited start=\(start >> 20)MiB limit=\((start + headroom) >> 20)MiB")
    if holders { setenv("DEALLOCTRACE_HOLDERS", "1", 1) }
    let arguments = ["StressChild", "limited-run"]
    var pointers = arguments.map { strdup($0) }
    pointers.append(nil)
    execv("/proc/self/exe", &pointers)
    ChildOutput.error("limited: cannot execute itself again")
    return 71
  }

  static func run() -> Int32 {
    _ = DeallocTrace.isEnabled  // tracing from DEALLOCTRACE_LOG starts here
    let watched = handOver()
    var drained = 0
    for _ in 0..<pollRounds {
      drained = watched.filter { $0.object == nil }.count
      if drained == watched.count { break }
      usleep(pollMicroseconds)
    }
    ChildOutput.line("limited drained=\(drained) of \(watched.count)")
    if drained < watched.count { ChildOutput.line("limited not drained") }
    return 0
  }

  /// The bytes of address space mapped now: `/proc/self/statm`'s first field, in pages.
  static func addressSpaceUsed() -> UInt64 {
    let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return 0 }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 64)
    let count = read(fd, &bytes, bytes.count)
    guard count > 0 else { return 0 }
    let digits = bytes[..<count].prefix { $0 >= 0x30 && $0 <= 0x39 }
    let pages = UInt64(String(decoding: digits, as: UTF8.self)) ?? 0
    return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// Hands 200 cells and their controller to the shared queue, one by one as FeedDemo does.
  @inline(never)
  private static func handOver() -> [WeakBox] {
    var controller: LimitedController? = LimitedController(cellCount: 5_000)
    var watched: [WeakBox] = []
    for _ in 0..<200 {
      var cell: LimitedCell? = controller?.cells.popLast()
      watched.append(WeakBox(cell))
      performBackgroundDeallocation(&cell)
    }
    watched.append(WeakBox(controller))
    performBackgroundDeallocation(&controller)
    return watched
  }
}

private final class WeakBox {
  weak var object: AnyObject?
  init(_ object: AnyObject?) { self.object = object }
}

private final class LimitedCell {
  var contents: [String: String]
  init(index: Int) {
    contents = ["id": "cell-\(index)", "label": "cell number \(index)"]
  }
}

private final class LimitedController {
  var cells: [LimitedCell]
  init(cellCount: Int) {
    cells = (0..<cellCount).map(LimitedCell.init(index:))
  }
}
