import CTraceRuntime
import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A view model that stands for a screen's data; its type name shows up in the log.
final class FeedController {
  let rows = Array(repeating: 0, count: 16)
}

/// Kept alive by `retainedElsewhere` after the queue releases it: the survivor.
final class RetainedController {}

/// Its deinit, run on the queue's thread, enqueues another object and sets a mark.
final class ReenqueuingController {
  deinit {
    var child: FeedController? = FeedController()
    DeallocQueue.shared.releaseInBackground(&child)
    DeallocTrace.mark("deinit enqueued")
  }
}

nonisolated(unsafe) var retainedElsewhere: RetainedController?

/// Recurses `levels` deep, then hands a controller to the queue: the enqueue stack must
/// name this function.
@inline(never)
func handOverFeedController(levels: Int) {
  if levels > 0 {
    handOverFeedController(levels: levels - 1)
    blackHole(levels)
    return
  }
  var controller: FeedController? = FeedController()
  DeallocQueue.shared.releaseInBackground(&controller)
}

@inline(never)
func blackHole(_ value: Int) {
  if value == -1 { print("unreachable") }
}

func runScenario() {
  let privateQueue = DeallocQueue(label: "probe", delay: .milliseconds(50))
  handOverFeedController(levels: 5)
  DeallocTrace.mark("screen closed")

  // A survivor: the queue releases it while `retainedElsewhere` still holds it.
  retainedElsewhere = RetainedController()
  var handed = retainedElsewhere
  privateQueue.releaseInBackground(&handed)
  let checked = FeedController()
  DeallocTrace.recordCheck(checked, alive: true, label: "TraceProbe.check")
  privateQueue.drain()

  // A deinit that enqueues and marks, released by an explicit drain.
  var reenqueuing: ReenqueuingController? = ReenqueuingController()
  DeallocQueue.shared.releaseInBackground(&reenqueuing)
  DeallocQueue.shared.drain()

  // An enqueue from a named thread.
  let worker = Thread {
    // pthread_setname_np, directly: Foundation's setter does not always reach the OS name.
    ctrace_set_thread_name("probe-worker")
    var fromWorker: FeedController? = FeedController()
    DeallocQueue.shared.releaseInBackground(&fromWorker)
  }
  worker.start()
  while !worker.isFinished { usleep(1000) }

  // Let the timer drains run, then let the survivor go.
  usleep(300_000)
  retainedElsewhere = nil
  DeallocTrace.mark("survivor let go")
  usleep(50_000)
  _ = checked
}

/// Enqueues and drains until the process is killed.
func runForever() {
  var announced = false
  var round = 0
  while true {
    for _ in 0..<50 {
      handOverFeedController(levels: 2)
    }
    DeallocTrace.mark("round \(round)")
    round += 1
    if !announced && round == 3 {
      DeallocTrace.flush()  // "ready" means: three rounds are in the log
      FileHandle.standardOutput.write(Data("ready\n".utf8))
      announced = true
    }
    usleep(2_000)
  }
}

/// The child must not write into the parent's log; both keep working.
func runForkScenario() {
  handOverFeedController(levels: 1)
  let child = fork()
  if child == 0 {
    for _ in 0..<20 { handOverFeedController(levels: 1) }
    DeallocTrace.mark("child mark")
    DeallocQueue.shared.drain()
    exit(0)
  }
  var status: Int32 = 0
  waitpid(child, &status, 0)
  runScenario()
  print("child exit \(status)")
}

/// The survivor dies with nothing recorded after it; the tracer's timer must notice.
func runTimerSurvivor() {
  let queue = DeallocQueue(label: "probe", delay: .milliseconds(50))
  retainedElsewhere = RetainedController()
  var handed = retainedElsewhere
  queue.releaseInBackground(&handed)
  queue.drain()
  DeallocTrace.mark("let go next")
  retainedElsewhere = nil
  usleep(400_000)
}

/// Deletes the log mid-run: the tracer must say so once and stop; the queue keeps working.
func runDeletingLog() {
  handOverFeedController(levels: 1)
  usleep(100_000)
  if let path = DeallocTrace.logPath {
    unlink(path)
  }
  for _ in 0..<20 {
    handOverFeedController(levels: 1)
    usleep(10_000)
  }
  DeallocQueue.shared.drain()
  print("still running, tracing \(DeallocTrace.isEnabled ? "on" : "off")")
}
