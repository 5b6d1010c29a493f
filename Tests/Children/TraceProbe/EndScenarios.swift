import CTraceRuntime
import DeallocQueue
import DeallocTrace
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The order `runLostAtFinish` needs, kept by semaphores instead of a sleep: the release's
/// `deinit` starts, `finish()` closes the buffer (the writer reaches the recorder's test hook),
/// the `deinit` returns and its release record is refused, and only then does the writer count
/// what was refused.
enum ClosingOrder {
  static let deinitStarted = DispatchSemaphore(value: 0)
  static let bufferClosed = DispatchSemaphore(value: 0)
  static let drained = DispatchSemaphore(value: 0)
  static let drainerDone = DispatchSemaphore(value: 0)
  /// Long enough for any scheduling delay, short of the test's own timeout.
  static let bound = DispatchTime.now() + .seconds(15)

  /// Runs on the closing session's writer, after the buffer closed: lets the `deinit` return,
  /// then waits until the drain that released it is over, its record refused.
  static let beforeReleaseWait: @convention(c) () -> Void = {
    ClosingOrder.bufferClosed.signal()
    if ClosingOrder.drained.wait(timeout: ClosingOrder.bound) == .timedOut {
      FileHandle.standardError.write(Data("the drain never ended\n".utf8))
    }
  }
}

/// Its `deinit` outlasts `DeallocTrace.finish()`: it returns only once the closing session's
/// buffer is closed, so the queue's release record for it arrives at a closed session.
final class SlowDeinitController {
  deinit {
    ClosingOrder.deinitStarted.signal()
    if ClosingOrder.bufferClosed.wait(timeout: ClosingOrder.bound) == .timedOut {
      FileHandle.standardError.write(Data("the buffer never closed\n".utf8))
    }
  }
}

/// `end` must count the refused release in `lost`, and the three waiting objects, not the
/// refused one, in `pending`.
func runLostAtFinish(path: String) {
  do {
    try DeallocTrace.start(path: path)
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    return
  }
  let waiting = DeallocQueue(label: "waiting", delay: .seconds(60))
  for _ in 0..<3 {
    var controller: FeedController? = FeedController()
    waiting.releaseInBackground(&controller)
  }
  let racing = DeallocQueue(label: "racing", delay: .seconds(60))
  var slow: SlowDeinitController? = SlowDeinitController()
  racing.releaseInBackground(&slow)
  let drainer = Thread {
    racing.drain()
    ClosingOrder.drained.signal()
    ClosingOrder.drainerDone.signal()
  }
  drainer.start()
  guard ClosingOrder.deinitStarted.wait(timeout: ClosingOrder.bound) == .success else {
    FileHandle.standardError.write(Data("the deinit never started\n".utf8))
    return
  }
  ctrace_set_test_before_release_wait(ClosingOrder.beforeReleaseWait)
  DeallocTrace.finish()
  ctrace_set_test_before_release_wait(nil)
  guard ClosingOrder.drainerDone.wait(timeout: ClosingOrder.bound) == .success else {
    FileHandle.standardError.write(Data("the drainer never finished\n".utf8))
    return
  }
  print("waiting \(waiting.pendingCount)")
}

/// Five objects still queued at exit: `end` (from the exit handler) says `pending: 5`.
func runPendingAtExit() {
  let waiting = DeallocQueue(label: "waiting", delay: .seconds(60))
  for _ in 0..<5 {
    var controller: FeedController? = FeedController()
    waiting.releaseInBackground(&controller)
  }
  // One object released on time, so the log is not only about the pending ones.
  var freed: FeedController? = FeedController()
  DeallocQueue.shared.releaseInBackground(&freed)
  DeallocQueue.shared.drain()
  print("waiting \(waiting.pendingCount)")
}

/// Each round: 2000 survivors, let go just before `finish()` while another thread marks
/// (each mark looks at the survivors) as fast as it can. Every one of them must get its
/// `dealloc` before `end`: none may be reported leaked.
func runSurvivorRace(path: String, rounds: Int = 6, survivors: Int = 2000) {
  for round in 0..<rounds {
    do {
      try DeallocTrace.start(path: path)
    } catch {
      FileHandle.standardError.write(Data("\(error)\n".utf8))
      return
    }
    let queue = DeallocQueue(label: "race", delay: .seconds(60))
    var held = (0..<survivors).map { _ in RetainedController() }
    for object in held {
      var handed: RetainedController? = object
      queue.releaseInBackground(&handed)
    }
    queue.drain()
    let stop = StopFlag()
    let hammer = Thread {
      var looks = 0
      while !stop.isSet {
        DeallocTrace.mark("look \(looks)")
        looks += 1
      }
    }
    hammer.start()
    usleep(5_000)
    held.removeAll()
    DeallocTrace.finish()
    stop.set()
    while !hammer.isFinished { usleep(1_000) }
    print("round \(round) done")
  }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
  private let value = Atomic<Bool>(false)

  var isSet: Bool { value.load(ordering: .acquiring) }

  func set() { value.store(true, ordering: .releasing) }
}
