import CHolders
import CTraceRuntime
import Synchronization

/// The recorder's side of "who still holds it" (issue 10): turning the holder machinery of
/// `CHolders` on, running its reference scan at the moments that matter, and copying its
/// answer out, one `holders` record per object.
///
/// The scan is synchronous on the thread that found something (a drain that released a
/// survivor, a leak check, `finish()`), never on the enqueue path or the writer: it costs
/// tens of milliseconds on a large heap, which only such moments can afford. The scanning
/// thread's own stack is not scanned (the scanner's rule), which is where the recorder
/// keeps its strong references while it looks; everywhere else the recorder keeps object
/// addresses hidden (`HiddenAddress`), so its own memory never reads as a holder.
enum Holders {
  /// How many references a path may climb from the object before it gives up (`none`).
  /// Six levels reached every root the prototype met (global → cache → array → object is
  /// three); each level costs one pass over the scanned memory.
  static let maxDepth: Int32 = 6
  /// How many direct holders get a path; the rest are counted in `more`.
  static let maxPaths: Int32 = 8
  /// The most objects one scan looks for: their addresses sit in a stack buffer (1 KiB),
  /// because the scanner does not scan the calling thread's stack and anywhere else they
  /// would be found as holders.
  static let maxTargetsPerScan = 128

  /// Where the live object at `address` was allocated, innermost return address first
  /// (DEALLOCTRACE_ALLOC_STACKS); empty when allocation stacks are off or it has none.
  static func allocationStack(of address: UInt) -> [UInt] {
    var ips = [UInt](repeating: 0, count: Int(CHOLDERS_ALLOC_STACK_DEPTH))
    let count = ips.withUnsafeMutableBufferPointer { buffer in
      cholders_alloc_stack_of(address, buffer.baseAddress, buffer.count)
    }
    return Array(ips.prefix(count))
  }

  /// The retain/release history of the live object at `address` (DEALLOCTRACE_HISTORY),
  /// nil when its type is under none or nothing was recorded for it.
  static func history(of address: UInt) -> TraceEvent.RetainHistory? {
    var events = [cholders_history_event](
      repeating: cholders_history_event(), count: Int(CHOLDERS_HISTORY_EVENTS_PER_OBJECT))
    var dropped: UInt64 = 0
    var lost: UInt64 = 0
    let count = events.withUnsafeMutableBufferPointer { buffer in
      cholders_history_of(address, buffer.baseAddress, buffer.count, &dropped, &lost)
    }
    guard count > 0 else { return nil }
    var stacks: [UInt32: [UInt]] = [:]
    var ips = [UInt](repeating: 0, count: Int(CHOLDERS_HISTORY_STACK_DEPTH))
    let recorded = events.prefix(count).map { event in
      let frames =
        stacks[event.stack]
        ?? {
          let depth = ips.withUnsafeMutableBufferPointer { buffer in
            cholders_history_stack(event.stack, buffer.baseAddress, buffer.count)
          }
          let frames = Array(ips.prefix(depth))
          stacks[event.stack] = frames
          return frames
        }()
      return TraceEvent.RetainHistory.Event(
        op: opName(event.op), countAfter: Int(event.count_after), frames: frames)
    }
    return TraceEvent.RetainHistory(events: recorded, dropped: dropped, lost: lost)
  }

  /// The log's name of a history event kind (CHoldersHistory.h).
  private static func opName(_ op: UInt32) -> StaticString {
    switch Int(op) {
    case Int(CHOLDERS_HISTORY_RETAIN): return "retain"
    case Int(CHOLDERS_HISTORY_ALLOC): return "alloc"
    case Int(CHOLDERS_HISTORY_ENQUEUE): return "enqueue"
    case Int(CHOLDERS_HISTORY_UNOWNED_RETAIN): return "unowned-retain"
    case Int(CHOLDERS_HISTORY_UNOWNED_RELEASE): return "unowned-release"
    default: return "release"
    }
  }

  /// Set once the refusal has been said on stderr: one line per process, not per session.
  private static let refusalReported = Atomic<Bool>(false)
  /// Set once a failed scan has been said on stderr: one line per process.
  private static let failureReported = Atomic<Bool>(false)

  /// Says once per process that a scan failed (the scanner ran out of memory); each
  /// session counts its objects in `end`'s `holder_scans_failed`.
  static func reportFailureOnce() {
    guard !failureReported.exchange(true, ordering: .relaxed) else { return }
    StandardError.write(
      "dealloctrace: a holder scan ran out of memory; objects it looked for have no holders"
        + " record (counted in the log's end record, holder_scans_failed)")
  }

  /// Whether the registry and the hooks are on in this process.
  static var isOn: Bool {
    Int(cholders_state()) == CHOLDERS_ON
  }

  /// Turns the machinery on (idempotent). When this runtime cannot be hooked safely, says
  /// why once on stderr and returns false; the caller goes on without holders.
  static func enable() -> Bool {
    let state = Int(cholders_enable())
    guard state != CHOLDERS_ON else { return true }
    // With `DEALLOCTRACE_HOLDERS` set, CHolders' load-time constructor tried first and has
    // said why on stderr already (no Swift code ran yet): one line per process.
    let saidAtLoad = TraceConfiguration.holders(from: TraceConfiguration.processEnvironment())
    if !refusalReported.exchange(true, ordering: .relaxed) && !saidAtLoad {
      let problem = String(cString: cholders_problem())
      StandardError.write(
        "dealloctrace: "
          + (problem.isEmpty ? "holders off: the holder scanner did not start" : problem)
          + "; tracing goes on without them")
    }
    return false
  }

  /// Scans for the holders of `count` objects, whose addresses `fill` writes into a buffer
  /// on this thread's stack. Returns one answer per object, nil for an object that is no
  /// live registered Swift object; nil in all when holders are off or the scan failed.
  ///
  /// `callerReferences` is how many strong references to each object the caller holds
  /// where the scan does not look (this thread's stack, hidden words): with it, the
  /// object's strong count tells which words are stale copies (the record's `surplus`).
  /// Too low only keeps more words; too high could leave an owner out.
  ///
  /// Never inlined, and the buffer is zeroed before it goes, so that the addresses do not
  /// outlive the scan in this thread's stack; the scanner's answer (tool memory) is freed
  /// once copied, its holders' addresses hidden in the copy; the scanner's and the copy's
  /// dead frames are scrubbed right after (a later scan from another thread would read
  /// them).
  @inline(never)
  static func scan(
    count: Int, callerReferences: Int32, fill: (UnsafeMutableBufferPointer<UInt>) -> Void
  ) -> [HoldersValue?]? {
    precondition(count > 0 && count <= maxTargetsPerScan)
    let values = withUnsafeTemporaryAllocation(of: UInt.self, capacity: count) {
      targets -> [HoldersValue?]? in
      fill(targets)
      let answer = cholders_scan(targets.baseAddress, count, maxDepth, maxPaths, callerReferences)
      targets.update(repeating: 0)
      guard let answer else { return nil }
      defer { cholders_scan_free(answer) }
      return UnsafeBufferPointer(start: answer.pointee.targets, count: answer.pointee.count).map(
        HoldersValue.init)
    }
    ctrace_scrub_dead_stack()
    return values
  }
}

/// Why a scan ran: the `holders` record's `why`.
enum HolderScanReason: Int {
  /// A traced release found a survivor.
  case release = 1
  /// A leak check saw the object alive outside any queue.
  case check = 2
  /// The session ended with the survivor still alive.
  case end = 3

  /// The strong references the recorder holds to each object while it scans for this
  /// reason, out of the scan's sight: after a release, the drain's look at the survivor (the
  /// reference the `release` record's retain count leaves out); at the end, the one hidden
  /// reference that keeps each survivor alive through the scan; at a check, none known (the
  /// caller's are its own business), so that no owner is ever left out.
  var callerReferences: Int32 {
    switch self {
    case .release: Int32(Survivor.referencesOfALook)
    case .end: 1
    case .check: 0
    }
  }

  var name: StaticString {
    switch self {
    case .release: "release"
    case .check: "check"
    case .end: "end"
    }
  }
}

/// An object address as the recorder keeps it in memory: XOR-ed with a constant.
///
/// Why: the reference scan reports every aligned word equal to an object's address as a
/// holder, and the recorder keeps addresses in many places a scan reads (the event buffer,
/// the per-thread pending enqueue, the survivor list, the strong references a look takes).
/// Hidden, none of them can be mistaken for a holder. The trade-off is one XOR where an
/// address is stored and one where it is formatted; the mask sets high bits, so a hidden
/// word is no canonical user-space pointer even after the scanner masks tag bits off.
package enum HiddenAddress {
  static let mask: UInt = 0xa5a5_a5a5_a5a5_a5a5

  @inline(__always)
  package static func hide(_ address: UInt) -> UInt { address ^ mask }

  @inline(__always)
  static func reveal(_ hidden: UInt) -> UInt { hidden ^ mask }
}

/// Strong references the recorder takes while it looks, kept as hidden retained pointers so
/// that a concurrent scan does not find them. Released explicitly by `releaseAll()`.
/// `@unchecked Sendable`: they leave the critical section only to be released by the
/// thread that took them.
struct HiddenReferences: @unchecked Sendable {
  private var hidden: [UInt] = []

  var isEmpty: Bool { hidden.isEmpty }

  mutating func retain(_ object: AnyObject) {
    hidden.append(HiddenAddress.hide(UInt(bitPattern: Unmanaged.passRetained(object).toOpaque())))
  }

  /// Drops every reference; this may run `deinit`s, so never under a lock.
  mutating func releaseAll() {
    for word in hidden {
      guard let pointer = UnsafeRawPointer(bitPattern: HiddenAddress.reveal(word)) else { continue }
      Unmanaged<AnyObject>.fromOpaque(pointer).release()
    }
    hidden = []
  }
}
