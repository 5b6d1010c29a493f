import DeallocQueue
import DeallocTrace
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Its `deinit` outlasts `DeallocTrace.finish()`: it waits until tracing is off (the
/// session unpublished), then long enough for `finish()` to close the buffer, so the
/// queue's release record for it arrives at a closed session.
final class SlowDeinitController {
  static let deinitStarted = DispatchSemaphore(value: 0)

  deinit {
    Self.deinitStarted.signal()
    while DeallocTrace.isEnabled { usleep(1_000) }
    usleep(50_000)
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
  let drainer = Thread { racing.drain() }
  drainer.start()
  SlowDeinitController.deinitStarted.wait()
  DeallocTrace.finish()
  while !drainer.isFinished { usleep(1_000) }
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
