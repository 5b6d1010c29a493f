import DeallocQueue
import DeallocTrace
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// The holder scenarios (issue 10): each keeps one object alive in one known way, hands it to
// a queue that nothing else drains (a 60 s delay), and drains it explicitly on the main
// thread, so that the holder scan runs on the main thread, whose stack it does not read.
// The tests run them with `DEALLOCTRACE_HOLDERS=1` and assert the exact `holders` records.

/// What a scenario keeps alive: its type name is what the records show.
final class HeldThumb {
  let pixels = [UInt8](repeating: 7, count: 32)
}

/// A cache that is a real global: `static let shared`, holding an array.
final class HolderCache: @unchecked Sendable {
  // @unchecked: the scenarios touch it from the main thread only.
  static let shared = HolderCache()
  var keep: [AnyObject] = []
}

/// A view model whose closure captures only `self`: the closure's context is the object.
final class SelfCapturingModel {
  var onChange: (() -> Void)?
  var count = 0

  init() {
    onChange = { self.count += 1 }
  }
}

/// A view model whose closure captures `self` and a string: a real closure context.
final class CapturingModel {
  var onChange: (() -> Void)?
  var title = ""

  init(suffix: String) {
    onChange = { self.title += suffix }
  }
}

/// The middle of a global → property → object chain.
final class HolderSession {
  var current: HeldThumb?
}

nonisolated(unsafe) var holderSession: HolderSession? = HolderSession()
nonisolated(unsafe) var lateHolder: HeldThumb?
nonisolated(unsafe) var staleKept: HeldThumb?
/// Where the stale-copy scenario leaves the address: malloc memory, never read again.
nonisolated(unsafe) var staleCopyBuffer: UnsafeMutablePointer<UInt>?

/// Which holder scenario `TraceProbe holders NAME` runs.
enum HolderScenario: String, CaseIterable {
  /// A thumbnail in `HolderCache.shared.keep`: leaked (release and end records).
  case globalArray = "global-array"
  /// `SelfCapturingModel.onChange` captures only `self`: a cycle through the object.
  case closureSelf = "closure-self"
  /// `CapturingModel.onChange` captures `self` and a `String`: a cycle through a context.
  case closureContext = "closure-context"
  /// `holderSession.current`: global → property → object.
  case chain
  /// Held only by a local of another thread, which lets go after the scan.
  case otherThread = "other-thread"
  /// Held by the global `lateHolder` at the release, which lets go before a mark: a late
  /// dealloc (a release record, then `dealloc`, no end record).
  case late
  /// Nothing else holds it: freed by the release, no `holders` record.
  case freed
  /// Two thumbnails in `HolderCache.shared.keep`: the same path for both.
  case samePath = "same-path"
  /// Checks: one object held by `lateHolder` and in no queue (a `check` scan), one waiting
  /// in a queue (no scan: the queue holds it).
  case check
  /// More survivors of one signature than the cap: the rest are counted as skipped.
  case cap
  /// Held by the global `staleKept`, with a raw copy of its address in a live malloc buffer
  /// (a word that owns nothing): only the global is a holder, the copy is counted.
  case staleCopy = "stale-copy"
  /// A survivor held by `lateHolder`, checked twice while another thread looks at the
  /// survivors (marks) and drains without pause: the recorder's own references, taken
  /// by those looks, must never show up in a scan.
  case busy
}

/// Tells the busy scenario's worker to stop.
private let busyStop = Atomic<Bool>(false)

/// A queue that only explicit drains empty.
private let holderQueue = DeallocQueue(label: "held", delay: .seconds(60))

/// Hands `object` to the queue from a function of its own (one enqueue stack per caller).
@inline(never)
private func handOver(_ object: AnyObject) {
  var handed: AnyObject? = object
  holderQueue.releaseInBackground(&handed)
}

@inline(never)
private func handOverForCap(_ object: AnyObject) {
  var handed: AnyObject? = object
  holderQueue.releaseInBackground(&handed)
}

/// Runs one scenario; prints nothing unless something is wrong.
func runHolderScenario(_ name: String) {
  guard let scenario = HolderScenario(rawValue: name) else {
    FileHandle.standardError.write(Data("unknown holder scenario \(name)\n".utf8))
    exit(64)
  }
  // Creating the queue starts tracing from the environment, before the first record.
  _ = holderQueue.pendingCount
  switch scenario {
  case .globalArray:
    HolderCache.shared.keep.append(HeldThumb())
    handOver(HolderCache.shared.keep[0])
    holderQueue.drain()
  case .closureSelf:
    handOver(SelfCapturingModel())
    holderQueue.drain()
  case .closureContext:
    handOver(CapturingModel(suffix: String(repeating: "!", count: 40)))
    holderQueue.drain()
  case .chain:
    holderSession?.current = HeldThumb()
    handOver(holderSession!.current!)
    holderQueue.drain()
  case .otherThread:
    runOtherThreadHolder()
  case .late:
    lateHolder = HeldThumb()
    handOver(lateHolder!)
    holderQueue.drain()
    lateHolder = nil
    DeallocTrace.mark("late holder let go")
  case .freed:
    handOver(HeldThumb())
    holderQueue.drain()
  case .samePath:
    // Room for both first: a growing array leaves its old storage, with the first
    // element's address in it, in freed malloc memory, which reads as a `heap` holder.
    HolderCache.shared.keep.reserveCapacity(2)
    HolderCache.shared.keep.append(HeldThumb())
    HolderCache.shared.keep.append(HeldThumb())
    handOver(HolderCache.shared.keep[0])
    handOver(HolderCache.shared.keep[1])
    holderQueue.drain()
  case .check:
    lateHolder = HeldThumb()
    DeallocTrace.recordCheck(lateHolder!, alive: true, label: "holders.check.global")
    let queued = HeldThumb()
    handOver(queued)
    DeallocTrace.recordCheck(queued, alive: true, label: "holders.check.queued")
  case .staleCopy:
    staleKept = HeldThumb()
    let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
    buffer.initialize(repeating: 0, count: 4)
    buffer[3] = UInt(bitPattern: Unmanaged.passUnretained(staleKept!).toOpaque())
    staleCopyBuffer = buffer
    handOver(staleKept!)
    holderQueue.drain()
  case .busy:
    runBusyHolder()
  case .cap:
    for _ in 0..<10 {
      HolderCache.shared.keep.append(HeldThumb())
      handOverForCap(HolderCache.shared.keep.last!)
    }
    holderQueue.drain()
  }
}

private func runBusyHolder() {
  lateHolder = HeldThumb()
  handOver(lateHolder!)
  holderQueue.drain()
  let started = DispatchSemaphore(value: 0)
  let finished = DispatchSemaphore(value: 0)
  let worker = Thread {
    let queue = DeallocQueue(label: "busy", delay: .seconds(60))
    var round = 0
    while !busyStop.load(ordering: .relaxed) {
      for _ in 0..<20 {
        var object: HeldThumb? = HeldThumb()
        queue.releaseInBackground(&object)
      }
      queue.drain()
      DeallocTrace.mark("busy round")
      if round == 0 { started.signal() }
      round += 1
    }
    finished.signal()
  }
  worker.start()
  started.wait()
  for index in 0..<2 {
    DeallocTrace.recordCheck(lateHolder!, alive: true, label: "holders.busy.\(index)")
  }
  busyStop.store(true, ordering: .relaxed)
  finished.wait()
}

/// A thread makes the object, hands it to the queue and keeps a local reference until the
/// main thread has drained the queue (and so scanned); semaphores order the two threads.
private func runOtherThreadHolder() {
  let handedOver = DispatchSemaphore(value: 0)
  let scanned = DispatchSemaphore(value: 0)
  let finished = DispatchSemaphore(value: 0)
  let worker = Thread {
    holdOnStack(handedOver: handedOver, scanned: scanned)
    finished.signal()
  }
  worker.start()
  handedOver.wait()
  holderQueue.drain()
  scanned.signal()
  finished.wait()
  DeallocTrace.mark("holder thread done")
}

@inline(never)
private func holdOnStack(handedOver: DispatchSemaphore, scanned: DispatchSemaphore) {
  let thumb = HeldThumb()
  handOver(thumb)
  handedOver.signal()
  scanned.wait()
  withExtendedLifetime(thumb) {}
}
