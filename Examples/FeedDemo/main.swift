import DeallocQueue
import DeallocTrace

// The feed demo: a screen with thousands of nodes is closed and handed to the background
// deallocation queue. A leak check looks too early (a false leak: the object is only
// waiting in the queue), one view model leaks through a retain cycle (a real leak), and a
// thumbnail held by a global cache dies late, after the queue let it go. A comment thread
// screen is freed, but two of its comments hold each other: a leak no queue saw, which only
// the whole-process census finds (`DEALLOCTRACE_LEAKS=1`).
//
// Run it with tracing on, then read the log:
//   DEALLOCTRACE_LOG=feed.jsonl swift run FeedDemo && swift run dealloctrace report feed.jsonl

/// Opens the feed, scrolls, and closes it, handing its graph to the queue.
/// Returns a weak view of the data controller, as a leak check in a test would hold.
@inline(never)
func closeFeedScreen(cellCount: Int) -> WeakReference {
  var controller: DataController? = DataController(cellCount: cellCount)
  let watched = WeakReference(controller)
  // Cells that scrolled off-screen are handed to the queue one by one, as Texture does.
  for _ in 0..<200 {
    var cell: CellNode? = controller?.cells.popLast()
    performBackgroundDeallocation(&cell)
  }
  performBackgroundDeallocation(&controller)
  return watched
}

/// Hands a thumbnail to the queue while the global cache still holds it.
@inline(never)
func dismissThumbnail() {
  var thumbnail: Thumbnail? = Thumbnail(bytes: 64 * 1024)
  ThumbnailCache.shared.keep(thumbnail!)
  performBackgroundDeallocation(&thumbnail)
}

/// Hands the profile's view model to the queue; its retain cycle keeps it alive.
@inline(never)
func closeProfileScreen() -> WeakReference {
  var model: ProfileViewModel? = ProfileViewModel()
  let watched = WeakReference(model)
  performBackgroundDeallocation(&model)
  return watched
}

/// Closes the comment thread: the screen goes through the queue and is freed; its two
/// comments stay behind in a cycle.
@inline(never)
func closeCommentThread() {
  var screen: CommentThreadScreen? = CommentThreadScreen()
  performBackgroundDeallocation(&screen)
}

/// A naive leak assertion, as many test suites write it: "is it gone yet?", right now.
@discardableResult
func naiveLeakCheck(_ reference: WeakReference, label: String) -> Bool {
  let alive = reference.isAlive
  reference.recordCheck(alive: alive, label: label)
  print("  \(label): \(reference.typeName) is \(alive ? "ALIVE" : "gone")")
  return alive
}

if !DeallocTrace.isEnabled {
  print("tracing is off: set DEALLOCTRACE_LOG=PATH to record this run")
}

DeallocTrace.mark("feed opened")
let feed = closeFeedScreen(cellCount: 5_000)
DeallocTrace.mark("feed closed")
print("feed closed: \(DeallocQueue.shared.pendingCount) objects wait in the queue")

print("a test checks right away (too early):")
naiveLeakCheck(feed, label: "FeedScreenTests.testCloseReleasesDataController")

dismissThumbnail()
closeCommentThread()
let profile = closeProfileScreen()
DeallocTrace.mark("profile closed")

// The shared queue drains about 100 ms after its first entry; look again after that. With
// holder paths on (`DEALLOCTRACE_HOLDERS=1`), each survivor's scan runs on the draining
// thread and stretches the drain, so wait (a bounded while) until the feed is gone too.
usleepMilliseconds(250)
for _ in 0..<200 where feed.isAlive {
  usleepMilliseconds(10)
}
DeallocTrace.mark("after the queue's delay")
print("the same checks after the queue's delay:")
naiveLeakCheck(feed, label: "FeedScreenTests.testCloseReleasesDataController")
naiveLeakCheck(profile, label: "ProfileScreenTests.testCloseReleasesViewModel")

// The cache lets the thumbnail go: it dies late, long after the queue released it.
ThumbnailCache.shared.evictAll()
DeallocTrace.mark("thumbnail cache evicted")

if let path = DeallocTrace.logPath {
  print("trace written to \(path)")
}
