import CTraceRuntime
import DeallocHooks
import Glibc

/// How many holder scans a session may still run.
///
/// A scan costs tens of milliseconds on a large heap, on a thread of the host's (a drain, a
/// test), so a session that leaks thousands of objects of one kind must not pay that
/// thousands of times: the first few of each finding signature (the type plus the enqueue
/// stack, as a report groups findings) say who holds them, the rest look alike. Every scan
/// not run is counted (`end`'s `holder_scans_skipped`), never silently dropped. The
/// trade-off: a leak whose holder differs from its look-alikes' after the cap is reached
/// goes unnamed; the count tells the reader that it happened.
final class HolderBudget: @unchecked Sendable {
  // @unchecked: every field is behind `state`'s lock.
  /// The most objects scanned for in one session.
  static let maxScansPerSession = 64
  /// The most objects scanned for per finding signature.
  static let maxScansPerSignature = 4

  /// A finding signature as the recorder can know it: the object's type (its metatype, or
  /// its name for a check given a name only) and its enqueue stack's id (0: none known).
  struct Signature: Hashable {
    enum TypeKey: Hashable {
      case metatype(UInt)
      case name(String)
    }

    var type: TypeKey
    var stack: Int
  }

  private struct State {
    var scans = 0
    var skipped = 0
    var failed = 0
    var perSignature: [Signature: Int] = [:]
    /// The enqueue stack id of every traced object not known to be freed, filled in by the
    /// writer as it interns stacks (the recording threads never see stack ids).
    var stacks: [UInt64: Int] = [:]
  }

  private let state = AnnotatedMutex(State())

  /// The writer formatted object `id`'s enqueue, with stack `stack` (0: no stack).
  func noteEnqueue(id: UInt64, stack: Int) {
    state.withLock { $0.stacks[id] = stack }
  }

  /// The writer formatted object `id`'s death: its stack is no longer needed.
  func forget(id: UInt64) {
    state.withLock { _ = $0.stacks.removeValue(forKey: id) }
  }

  /// Whether the writer has told the stack of object `id` yet (always true for id 0).
  func knowsStack(of id: UInt64) -> Bool {
    id == 0 || state.withLock { $0.stacks[id] != nil }
  }

  /// Takes one scan out of the budget for an object of `type` with id `id` (0: unknown);
  /// false, and counted as skipped, when a cap is reached.
  func admit(_ type: Signature.TypeKey, id: UInt64) -> Bool {
    state.withLock { state in
      let signature = Signature(type: type, stack: id == 0 ? 0 : state.stacks[id] ?? 0)
      let used = state.perSignature[signature] ?? 0
      guard state.scans < Self.maxScansPerSession, used < Self.maxScansPerSignature else {
        state.skipped += 1
        return false
      }
      state.scans += 1
      state.perSignature[signature] = used + 1
      return true
    }
  }

  /// `count` objects whose scan ran and failed (the scanner ran out of memory).
  func noteFailed(_ count: Int) {
    state.withLock { $0.failed += count }
  }

  /// Scans run, scans skipped and objects whose scan failed so far.
  func counts() -> (scans: Int, skipped: Int, failed: Int) {
    state.withLock { ($0.scans, $0.skipped, $0.failed) }
  }
}

/// One object a scan looks for, as the recorder keeps it until the scan.
struct HolderTarget {
  var hiddenAddress: UInt
  var id: UInt64
  var metatype: UnsafeRawPointer?
  /// The type's name, when there is no metatype (a check given a name).
  var typeName: String = ""

  var typeKey: HolderBudget.Signature.TypeKey {
    metatype.map { .metatype(UInt(bitPattern: $0)) } ?? .name(typeName)
  }
}

extension Tracer {
  /// Runs `body` under the survivor list's lock once no look at the survivors is letting
  /// go of its strong references (outside the lock, briefly in registers and the stack of
  /// its thread), so that a scan in `body` cannot count them. Waits at most
  /// `TraceSession.releaseWaitNanoseconds`, polling outside the lock as `finish()`'s last
  /// look does: a look's `deinit`s may themselves wait for the lock.
  static func withSurvivorsQuiet(
    _ session: TraceSession, _ body: (inout [Survivor]) -> Void
  ) {
    let deadline = ctrace_monotonic_ns() &+ TraceSession.releaseWaitNanoseconds
    while true {
      let done = session.survivors.withLock { list -> Bool in
        let busy = session.survivorLooksLettingGo.load(ordering: .sequentiallyConsistent) > 0
        guard !busy || ctrace_monotonic_ns() >= deadline else { return false }
        body(&list)
        return true
      }
      if done { return }
      usleep(1_000)
    }
  }

  /// The holders of a survivor that its traced release just found (`why: "release"`).
  ///
  /// Called with the survivor list's lock held, right after the `release` record: scans
  /// exclude looks at the survivors (which hold strong references, hidden but briefly in
  /// registers), and `finish()`'s last look cannot close the buffer in between. `object` is
  /// the caller's strong reference, on this thread's stack, which the scan does not read.
  static func recordHoldersAfterRelease(
    of object: AnyObject, id: UInt64, in session: TraceSession
  ) {
    guard let budget = session.holderBudget else { return }
    let address = UInt(bitPattern: ObjectIdentifier(object))
    let target = HolderTarget(
      hiddenAddress: HiddenAddress.hide(address), id: id,
      metatype: unsafeBitCast(type(of: object), to: UnsafeRawPointer.self))
    guard budget.admit(target.typeKey, id: id) else { return }
    scanAndRecord([target], why: .release, in: session)
  }

  /// The holders of an object a leak check saw alive (`why: "check"`), unless it waits in
  /// a queue (then the queue holds it, and the check is a delayed dealloc, not a leak).
  ///
  /// - Parameters:
  ///   - address: the object's address; the caller holds it alive, or for a check given an
  ///     address only, the scanner re-validates it as a live registered object.
  static func recordHoldersAtCheck(
    address: UInt, metatype: UnsafeRawPointer?, typeName: String, id: UInt64,
    in session: TraceSession
  ) {
    guard let budget = session.holderBudget, !session.buffer.hasStopped,
      !QueueTracing.isPendingInAnyQueue(address: address)
    else { return }
    if !budget.knowsStack(of: id) {
      // The enqueue was recorded moments ago and the writer has not interned its stack:
      // the signature needs it. Bounded by one writer pass.
      session.buffer.waitUntilWritten()
    }
    let target = HolderTarget(
      hiddenAddress: HiddenAddress.hide(address), id: id, metatype: metatype, typeName: typeName)
    withSurvivorsQuiet(session) { _ in
      guard budget.admit(target.typeKey, id: id) else { return }
      scanAndRecord([target], why: .check, in: session)
    }
    ctrace_scrub_dead_stack()
  }

  /// The holders of every survivor still alive as the session ends (`why: "end"`), in one
  /// multi-object scan (per `Holders.maxTargetsPerScan`). Runs in `finish()` (or the exit
  /// handler) before the last look, while the buffer still accepts records.
  static func recordHoldersAtEnd(_ session: TraceSession) {
    guard let budget = session.holderBudget,
      session.survivorCount.load(ordering: .relaxed) > 0
    else { return }
    // Every enqueue's stack interned, so that each survivor's signature is known.
    session.buffer.waitUntilWritten()
    var held = HiddenReferences()
    withSurvivorsQuiet(session) { list in
      var targets: [HolderTarget] = []
      for survivor in list {
        // A dead one gets its `dealloc` from the last look that follows.
        guard let object = survivor.object else { continue }
        let target = HolderTarget(
          hiddenAddress: survivor.hiddenAddress, id: survivor.id, metatype: survivor.metatype)
        guard budget.admit(target.typeKey, id: survivor.id) else { continue }
        // Kept alive until the scan is over (the address must not be reused meanwhile),
        // hidden so that the scan does not count this reference.
        held.retain(object)
        targets.append(target)
      }
      scanAndRecord(targets, why: .end, in: session)
    }
    held.releaseAll()
    ctrace_scrub_dead_stack()
  }

  /// Scans for `targets` and pushes one `holders` record for each that the scanner knows.
  private static func scanAndRecord(
    _ targets: [HolderTarget], why: HolderScanReason, in session: TraceSession
  ) {
    var start = 0
    while start < targets.count {
      let chunk = targets[start..<min(targets.count, start + Holders.maxTargetsPerScan)]
      start = chunk.endIndex
      let values = Holders.scan(count: chunk.count, callerReferences: why.callerReferences) {
        buffer in
        for (slot, target) in zip(buffer.indices, chunk) {
          buffer[slot] = HiddenAddress.reveal(target.hiddenAddress)
        }
      }
      guard let values else {
        // Out of memory: counted in `end` and said once,
        // never a silent gap in the records.
        session.holderBudget?.noteFailed(chunk.count)
        Holders.reportFailureOnce()
        return
      }
      for (target, value) in zip(chunk, values) {
        guard let value else { continue }
        let scan = TraceEvent.HolderScan(
          objectID: target.id, hiddenAddress: target.hiddenAddress,
          type: target.metatype.map { .metatype($0) } ?? .name(target.typeName), why: why,
          holders: value,
          allocationStack: Holders.allocationStack(of: HiddenAddress.reveal(target.hiddenAddress)),
          history: Holders.history(of: HiddenAddress.reveal(target.hiddenAddress)))
        session.buffer.push(TraceEvent(time: session.now(), .holders(scan)))
      }
    }
  }
}
