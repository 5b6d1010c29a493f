import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What the heartbeat mode does until it is killed: batches of enqueues on the shared queue
/// (100 ms delay, drained by its timer on dispatch workers) and on a private `beat` queue
/// that the main thread drains explicitly, each batch followed by a mark `batch N` and then
/// the line `beat N` on stdout. Every `flushEvery` batches it also waits until the log has
/// everything recorded so far (`DeallocTrace.flush()`) and says so: `written N`.
///
/// The parent kills it at a random moment and checks that everything recorded before the
/// last `written N` it heard is in the log: each such batch's mark, its enqueues, and the
/// explicit drain and releases the main thread recorded before the mark. (The writer's own
/// flush bound is tested on a simulated clock: WriterFlushTests.) Some objects
/// are kept alive past their release, so the log also holds late objects (a later
/// `dealloc`) and leaked ones.
struct HeartbeatRun {
  static let objectsPerBatch = 20
  /// Objects per batch handed to the `beat` queue and released by its explicit drain.
  static let drainedPerBatch = 5
  static let flushEvery = 10
  var logPath: String

  func run() -> Never {
    do {
      try DeallocTrace.start(path: logPath)
    } catch {
      ChildOutput.error("cannot start tracing: \(error)")
      exit(2)
    }
    let ledger = DeinitLedger(capacity: 1)
    let beatQueue = DeallocQueue(label: "beat", delay: .seconds(60))
    var heldForAWhile: [TrackedObject] = []
    var heldForever: [TrackedObject] = []
    var batch = 0
    while true {
      for slot in 0..<Self.objectsPerBatch {
        var object: TrackedObject? = TrackedObject(index: 0, ledger: ledger)
        if batch % 100 == 0 && slot == 0 { heldForAWhile.append(object!) }
        if batch % 25 == 0 && slot == 1 { heldForever.append(object!) }
        DeallocQueue.shared.releaseInBackground(&object)
      }
      for _ in 0..<Self.drainedPerBatch {
        var object: TrackedObject? = TrackedObject(index: 0, ledger: ledger)
        beatQueue.releaseInBackground(&object)
      }
      beatQueue.drain()
      DeallocTrace.mark("batch \(batch)")
      ChildOutput.line("beat \(batch)")
      if batch % Self.flushEvery == Self.flushEvery - 1 {
        DeallocTrace.flush()
        ChildOutput.line("written \(batch)")
      }
      if batch % 100 == 90 { heldForAWhile.removeAll() }
      batch += 1
      usleep(3_000)
    }
  }
}
