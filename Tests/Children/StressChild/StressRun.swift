import DeallocQueue
import DeallocTrace
import Dispatch
import Foundation
import Synchronization

/// What the stress mode does: `threads` threads hand `objects` objects in total to three
/// queues with different delays, while a drainer thread drains them explicitly and every
/// thread sets marks now and then. Tracing is on for the whole run.
struct StressRun {
  var objects = 1_000_000
  var threads = 8
  var logPath: String
  /// Backtrace depth; stacks are interned, so the log grows little with it.
  var frames = 8

  /// Runs and checks the ledger; returns the exit status (0 when every object deinited
  /// exactly once).
  func run() -> Int32 {
    let queues = [
      DeallocQueue(label: "stress-a", delay: .milliseconds(5)),
      DeallocQueue(label: "stress-b", delay: .milliseconds(20)),
      DeallocQueue(label: "stress-c", delay: .milliseconds(100)),
    ]
    do {
      try DeallocTrace.start(path: logPath, frames: frames)
    } catch {
      ChildOutput.error("cannot start tracing: \(error)")
      return 2
    }
    let ledger = DeinitLedger(capacity: objects)
    let stop = Atomic<Bool>(false)
    let drainer = spawn {
      var round = 0
      while !stop.load(ordering: .relaxed) {
        queues[round % queues.count].drain()
        if round % 16 == 0 { DeallocTrace.mark("drainer \(round)") }
        round += 1
        usleep(200)
      }
    }
    let perThread = (objects + threads - 1) / threads
    let workers = (0..<threads).map { worker in
      spawn {
        let range = (worker * perThread)..<min(objects, (worker + 1) * perThread)
        for index in range {
          var object: TrackedObject? = TrackedObject(index: index, ledger: ledger)
          let queue = queues[(index &* 7 &+ worker) % queues.count]
          queue.releaseInBackground(&object)
          if index % 1009 == 0 { queue.drain() }
          if index % 4999 == 0 { DeallocTrace.mark("worker \(worker) at \(index)") }
        }
      }
    }
    for worker in workers { worker.wait() }
    stop.store(true, ordering: .relaxed)
    drainer.wait()
    let settled = ledger.waitFor(objects, seconds: 120) {
      for queue in queues { queue.drain() }
    }
    DeallocTrace.mark("all released")
    DeallocTrace.finish()
    let (missing, repeated) = ledger.tally()
    ChildOutput.line(
      "stress objects=\(objects) deinits=\(ledger.deinitCount) missing=\(missing)"
        + " repeated=\(repeated) settled=\(settled)")
    return settled && missing == 0 && repeated == 0 && ledger.deinitCount == objects ? 0 : 1
  }

  /// Starts `body` on a thread of its own; the semaphore is signalled when it returns.
  private func spawn(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      body()
      done.signal()
    }
    thread.stackSize = 1 << 20
    thread.start()
    return done
  }
}
