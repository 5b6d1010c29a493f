import DeallocQueue

// The feed demo: a screen with thousands of nodes is closed and handed to the background
// deallocation queue. A leak check looks too early (a false leak), one view model leaks
// through a retain cycle (a real leak), and a cached thumbnail dies late.

/// Opens and closes the feed screen, handing its graph to the queue.
@inline(never)
func closeFeedScreen(cellCount: Int) -> [AnyObject] {
  var controller: DataController? = DataController(cellCount: cellCount)
  weak let watched = controller
  // Cells that scrolled off-screen are handed to the queue one by one, as Texture does.
  for _ in 0..<200 {
    var cell: CellNode? = controller?.cells.popLast()
    performBackgroundDeallocation(&cell)
  }
  performBackgroundDeallocation(&controller)
  return [watched].compactMap { $0 }
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
func closeProfileScreen() -> AnyObject? {
  var model: ProfileViewModel? = ProfileViewModel()
  weak let watched = model
  performBackgroundDeallocation(&model)
  return watched
}

let feed = closeFeedScreen(cellCount: 5_000)
print("feed closed: \(DeallocQueue.shared.pendingCount) objects waiting in the queue")
dismissThumbnail()
let profile = closeProfileScreen()
print("profile closed; the queue drains in about 100 ms")
_ = feed
_ = profile
DeallocQueue.shared.drain()
