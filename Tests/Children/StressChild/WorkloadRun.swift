import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What the workload mode does: an ordinary host program that knows nothing of the tracer
/// (tracing comes from `DEALLOCTRACE_LOG`), with a fault injected on request. It prints one
/// `workload …` line and exits with the status it was asked for, whatever the tracer met.
struct WorkloadRun {
  enum Fault: String {
    case none
    /// Unlinks the log after the first batch.
    case deleteLog = "delete-log"
    /// Forks after the second batch; the child uses the queue and marks, then exits.
    case fork
    /// Like `fork`, and the child also starts a session of its own on the parent's path.
    case forkTraced = "fork-traced"
  }

  static let batches = 6
  static let objectsPerBatch = 500
  var fault: Fault
  var exitStatus: Int32

  func run() -> Never {
    let total = Self.batches * Self.objectsPerBatch
    let ledger = DeinitLedger(capacity: total)
    let queue = DeallocQueue(label: "workload", delay: .milliseconds(20))
    let tracingAtStart = DeallocTrace.isEnabled
    for batch in 0..<Self.batches {
      for slot in 0..<Self.objectsPerBatch {
        var object: TrackedObject? = TrackedObject(
          index: batch * Self.objectsPerBatch + slot, ledger: ledger)
        (slot % 2 == 0 ? queue : DeallocQueue.shared).releaseInBackground(&object)
      }
      DeallocTrace.mark("workload batch \(batch)")
      if batch % 2 == 1 { queue.drain() }
      if batch == 0 && fault == .deleteLog, let path = DeallocTrace.logPath {
        unlink(path)
      }
      if batch == 1 && (fault == .fork || fault == .forkTraced) {
        forkChild()
      }
      usleep(30_000)
    }
    let settled = ledger.waitFor(total, seconds: 30) {
      queue.drain()
      DeallocQueue.shared.drain()
    }
    let (missing, repeated) = ledger.tally()
    ChildOutput.line(
      "workload deinits=\(ledger.deinitCount)/\(total) missing=\(missing) repeated=\(repeated)"
        + " settled=\(settled) tracing=\(tracingAtStart ? "on" : "off")"
        + "->\(DeallocTrace.isEnabled ? "on" : "off")")
    exit(exitStatus)
  }

  /// The forked child: works with the queue (and, for `forkTraced`, traces to the parent's
  /// path, which must land in a file of its own), then exits through `exit`, so the
  /// tracer's exit handler runs in the child too.
  private func forkChild() {
    let parentLog = DeallocTrace.logPath
    let child = fork()
    guard child == 0 else {
      var status: Int32 = 0
      waitpid(child, &status, 0)
      ChildOutput.line("forked child pid=\(child) status=\(status)")
      return
    }
    var childLog = "none"
    if fault == .forkTraced, let parentLog {
      do {
        try DeallocTrace.start(path: parentLog)
        childLog = DeallocTrace.logPath ?? "none"
      } catch {
        childLog = "error \(error)"
      }
    }
    let ledger = DeinitLedger(capacity: 200)
    for index in 0..<200 {
      var object: TrackedObject? = TrackedObject(index: index, ledger: ledger)
      DeallocQueue.shared.releaseInBackground(&object)
      if index % 50 == 0 { DeallocTrace.mark("forked child \(index)") }
    }
    DeallocQueue.shared.drain()
    ChildOutput.line("forked child log=\(childLog) deinits=\(ledger.deinitCount)/200")
    exit(ledger.deinitCount == 200 ? 0 : 1)
  }
}
