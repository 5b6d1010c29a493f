import CTraceRuntime
import DeallocQueue
import DeallocTrace
import Foundation

/// The window of `runIDStraddle`: the enqueuing thread stops in it (the recorder's test hook,
/// between loading the session and taking the object's id) until the main thread has
/// finished the first session and started the second.
enum StraddleWindow {
  static let reached = DispatchSemaphore(value: 0)
  static let restarted = DispatchSemaphore(value: 0)
  static let enqueued = DispatchSemaphore(value: 0)
  /// Long enough for any scheduling delay, short of the test's own timeout.
  static let bound = DispatchTime.now() + .seconds(60)

  static let hook: @convention(c) () -> Void = {
    StraddleWindow.reached.signal()
    _ = StraddleWindow.restarted.wait(timeout: StraddleWindow.bound)
  }
}

/// `id-straddle FIRST SECOND`: an enqueue that loaded the first session takes its id only
/// after that session finished and a second one started; the object is then drained in the
/// second. Neither log may hold a record of it: the first refused nothing (it never got the
/// enqueue), the second never saw the enqueue, so it must not record the release either.
func runIDStraddle(first: String, second: String) {
  do {
    try DeallocTrace.start(path: first)
    let queue = DeallocQueue(label: "straddle", delay: .seconds(60))
    ctrace_set_test_before_enqueue_id(StraddleWindow.hook)
    let enqueuer = Thread {
      var object: FeedController? = FeedController()
      queue.releaseInBackground(&object)
      StraddleWindow.enqueued.signal()
    }
    enqueuer.start()
    guard StraddleWindow.reached.wait(timeout: StraddleWindow.bound) == .success else {
      print("the enqueue never reached the window")
      return
    }
    ctrace_set_test_before_enqueue_id(nil)
    DeallocTrace.finish()
    try DeallocTrace.start(path: second)
    StraddleWindow.restarted.signal()
    guard StraddleWindow.enqueued.wait(timeout: StraddleWindow.bound) == .success else {
      print("the enqueue never returned")
      return
    }
    queue.drain()
    DeallocTrace.finish()
    print("straddled \(queue.pendingCount)")
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
  }
}
