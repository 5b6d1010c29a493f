import DeallocQueue
import DeallocTrace

/// What the feed mode does: FeedDemo's screen, opened and closed `screens` times with no
/// sleeps, so that a timing measures the work and the tool watching it, not a clock.
///
/// Each screen builds `cells` cells of three content nodes (strings and dictionaries, as in
/// FeedDemo), hands 200 of them to the queue one by one and then the data controller, hands
/// over a thumbnail a cache still holds and a view model caught in a retain cycle (a real
/// leak), sets marks, and drains. `scripts/compare-tools` runs it natively, traced, and
/// under heaptrack and valgrind.
struct FeedWorkload {
  var screens = 20
  var cells = 5_000

  func run() -> Int32 {
    _ = DeallocTrace.isEnabled  // starts tracing from DEALLOCTRACE_LOG before the first mark
    var cache: [FeedThumbnail] = []
    var leaked = 0
    for screen in 0..<screens {
      DeallocTrace.mark("feed \(screen) opened")
      var controller: FeedDataController? = FeedDataController(cellCount: cells)
      for _ in 0..<200 {
        var cell: FeedCell? = controller?.cells.popLast()
        performBackgroundDeallocation(&cell)
      }
      performBackgroundDeallocation(&controller)
      var thumbnail: FeedThumbnail? = FeedThumbnail(bytes: 64 * 1024)
      cache.append(thumbnail!)
      performBackgroundDeallocation(&thumbnail)
      var profile: FeedProfileModel? = FeedProfileModel()
      performBackgroundDeallocation(&profile)
      leaked += 1
      DeallocTrace.mark("feed \(screen) closed")
      DeallocQueue.shared.drain()
      if cache.count >= 4 { cache.removeAll() }
    }
    cache.removeAll()
    DeallocTrace.mark("feed done")
    ChildOutput.line("feed screens=\(screens) cells=\(cells) leaked=\(leaked)")
    return 0
  }
}

private final class FeedContent {
  let kind: String
  var attributes: [String: String]

  init(kind: String, index: Int) {
    self.kind = kind
    self.attributes = ["id": "\(kind)-\(index)", "accessibilityLabel": "\(kind) number \(index)"]
  }
}

private final class FeedCell {
  let index: Int
  var contents: [FeedContent]

  init(index: Int) {
    self.index = index
    self.contents = ["text", "image", "reactions"].map { FeedContent(kind: $0, index: index) }
  }
}

private final class FeedDataController {
  var cells: [FeedCell]

  init(cellCount: Int) {
    cells = (0..<cellCount).map(FeedCell.init(index:))
  }
}

private final class FeedThumbnail {
  let pixels: [UInt8]

  init(bytes: Int) {
    pixels = [UInt8](repeating: 0x7f, count: bytes)
  }
}

/// Its update closure captures it strongly: a retain cycle, leaked on purpose.
private final class FeedProfileModel {
  var onUpdate: (() -> Void)?
  var name = "demo user"

  init() {
    onUpdate = { self.name += "!" }
  }
}
