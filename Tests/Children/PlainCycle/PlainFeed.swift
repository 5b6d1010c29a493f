/// StressChild's feed workload without the queue or the recorder, for `make compare`'s
/// figure of `dealloctrace run --leaks` against native and heaptrack: `screens` times, a
/// screen of `cells` cells of three content nodes (strings and dictionaries) is built and let
/// go, a cache keeps up to four thumbnails, and a view model caught in a retain cycle leaks.
struct PlainFeed {
  var screens = 20
  var cells = 5_000

  func run() {
    var cache: [PlainThumbnail] = []
    var leaked = 0
    for _ in 0..<screens {
      let controller = PlainDataController(cellCount: cells)
      precondition(controller.cells.count == cells)
      cache.append(PlainThumbnail(bytes: 64 * 1024))
      _ = PlainProfileModel()
      leaked += 1
      if cache.count >= 4 { cache.removeAll() }
    }
    print("feed screens=\(screens) cells=\(cells) leaked=\(leaked)")
  }
}

private final class PlainContent {
  let kind: String
  var attributes: [String: String]

  init(kind: String, index: Int) {
    self.kind = kind
    self.attributes = ["id": "\(kind)-\(index)", "accessibilityLabel": "\(kind) number \(index)"]
  }
}

private final class PlainCell {
  let index: Int
  var contents: [PlainContent]

  init(index: Int) {
    self.index = index
    self.contents = ["text", "image", "reactions"].map { PlainContent(kind: $0, index: index) }
  }
}

private final class PlainDataController {
  var cells: [PlainCell]

  init(cellCount: Int) {
    cells = (0..<cellCount).map(PlainCell.init(index:))
  }
}

private final class PlainThumbnail {
  let pixels: [UInt8]

  init(bytes: Int) {
    pixels = [UInt8](repeating: 0x7f, count: bytes)
  }
}

/// Its update closure captures it strongly: a retain cycle, leaked on purpose.
private final class PlainProfileModel {
  var onUpdate: (() -> Void)?
  var name = "demo user"

  init() {
    onUpdate = { self.name += "!" }
  }
}
