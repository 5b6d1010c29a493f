import CHolders
import CTraceRuntime
import DeallocHooks
import Dispatch
import Glibc
import Synchronization

/// One recording: a log file, its event buffer, its writer thread and its survivors.
///
/// Sessions are never deallocated (the recording threads reach the current one through a
/// lock-free pointer and may still hold it after `finish()`); only their shell of a few
/// hundred bytes stays behind, the buffers are emptied when the writer ends.
final class TraceSession: @unchecked Sendable {
  enum EndReason: UInt8 {
    case exit = 1
    case explicit = 2

    var name: String { self == .exit ? "exit" : "explicit" }
  }

  let file: LogFile
  let frames: Int
  let pid: Int32
  /// The session's start on the monotonic clock; every `t` is relative to it.
  let startNanoseconds: UInt64
  /// Distinguishes sessions for the per-thread "already announced" mark.
  let generation: UInt64
  /// Object ids below this belong to an earlier session and are not recorded in this one.
  let firstID: UInt64
  /// `DEALLOCTRACE_MAX_SIZE`: the writer stops writing records before the file would grow
  /// past it (nil: no limit).
  let maxSize: UInt64?
  let buffer: EventBuffer
  /// The holder scans this session may still run; nil when it records no holders (the
  /// `session` record then has no `holders` key and no scan runs).
  let holderBudget: HolderBudget?
  /// Objects that survived their release, watched until they die.
  let survivors = AnnotatedMutex<[Survivor]>([])
  let survivorCount = Atomic<Int>(0)
  /// Looks at the survivors that left the list's lock still holding strong references
  /// (see `Tracer.lookLastAndClose`).
  let survivorLooksLettingGo = Atomic<Int>(0)
  let endReason = Atomic<UInt8>(EndReason.explicit.rawValue)
  /// Signalled once by the writer when it has written `end` (or given up).
  let writerFinished = DispatchSemaphore(value: 0)
  /// Set by the writer once it has written `end` or given up: nothing recorded after that
  /// can be written or counted, so recording threads stop trying.
  let isOver = Atomic<Bool>(false)
  /// Traced releases, begun while the session was open, between finding this session and
  /// handing over their record: the object's `deinit` runs in between, for as long as it
  /// likes. The writer waits a little for them before `end`, so that a release refused by
  /// the closing buffer is counted in `lost` instead of being missed.
  let releasesUnderWay = Atomic<Int>(0)

  /// How long the writer waits for releases under way before writing `end` anyway: the
  /// price of a complete `lost` count is paid by `finish()` and exit, and stays bounded.
  static let releaseWaitNanoseconds: UInt64 = 250_000_000

  /// How many events wait for the writer before recording threads wait for it instead:
  /// the most a backlog holds, and the memory a session keeps for events.
  static let bufferCapacity = 8192
  /// The buffer of a session that starts in a tight address space (`AddressSpaceRoom`).
  static let tightBufferCapacity = 1024

  init(
    file: LogFile, frames: Int, pid: Int32, generation: UInt64, firstID: UInt64,
    maxSize: UInt64? = nil, holders: Bool = false, bufferCapacity: Int = bufferCapacity
  ) {
    self.file = file
    self.maxSize = maxSize
    self.frames = frames
    self.pid = pid
    self.generation = generation
    self.firstID = firstID
    self.holderBudget = holders ? HolderBudget() : nil
    self.startNanoseconds = ctrace_monotonic_ns()
    self.buffer = EventBuffer(capacity: bufferCapacity, maxFrames: frames)
  }

  /// Nanoseconds since the session started.
  @inline(__always)
  func now() -> UInt64 {
    ctrace_monotonic_ns() &- startNanoseconds
  }

  /// Writes this thread's `thread` record the first time the thread records in this
  /// session. The name is read here, on the thread itself, once.
  @inline(__always)
  func announceCurrentThread() {
    if ctrace_thread_announced() != generation {
      announceCurrentThreadSlowly()
    }
  }

  @inline(never)
  private func announceCurrentThreadSlowly() {
    ctrace_set_thread_announced(generation)
    let threadID = ctrace_thread_id()
    var name = "main"
    if threadID != Int64(getpid()) {
      var bytes = [CChar](repeating: 0, count: 32)
      ctrace_thread_name(&bytes, bytes.count)
      name = String(
        decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    buffer.push(TraceEvent(time: 0, threadID: threadID, .thread(name: name)))
  }

  /// The `session` record, written synchronously by `start` so that an unusable file is
  /// reported at once.
  func headerLine(frames: Int, delayMilliseconds: Int) -> [UInt8] {
    var line = JSONLine()
    line.begin("session")
    line.field("v", 1)
    line.field("t", 0)
    line.field("pid", pid)
    line.field("exe", Self.executablePath())
    line.field("wall", Self.wallClockISO8601())
    line.field("delay_ms", delayMilliseconds)
    line.field("frames", frames)
    if holderBudget != nil { line.field("holders", true) }
    let history = String(cString: cholders_history_patterns())
    if holderBudget != nil, !history.isEmpty { line.field("history", history) }
    line.end()
    return line.bytes
  }

  private static func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return "" }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private static func wallClockISO8601() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var seconds = now.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int, _ width: Int) -> String {
      let text = String(value)
      return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-"
      + pad(Int(parts.tm_mday), 2) + "T" + pad(Int(parts.tm_hour), 2) + ":"
      + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2) + "."
      + pad(now.tv_nsec / 1000, 6) + "Z"
  }
}

/// An object the queue released while someone else still held it.
struct Survivor: @unchecked Sendable {
  weak var object: AnyObject?
  let id: UInt64
  /// Hidden (`HiddenAddress`): the survivor list must not read as a holder to a scan.
  let hiddenAddress: UInt
  /// The object's type, for the `holders` record of a scan at the session's end.
  let metatype: UnsafeRawPointer
}

extension Survivor {
  /// A weak reference to `object`, taken without keeping a strong copy in the caller.
  @inline(never)
  /// The strong references a look at a survivor holds: its weak reference's load. What a
  /// `release` record's retain count leaves out, and what a scan after that release is told
  /// is the recorder's own, so that both count the same holders.
  static let referencesOfALook = 1

  static func watching(_ object: AnyObject, id: UInt64) -> Survivor {
    var survivor = Survivor(
      object: nil, id: id,
      hiddenAddress: HiddenAddress.hide(
        UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())),
      metatype: unsafeBitCast(type(of: object), to: UnsafeRawPointer.self))
    survivor.object = object
    return survivor
  }
}
