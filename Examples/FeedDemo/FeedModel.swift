/// The demo's object graph: a feed screen whose data controller owns thousands of nodes.

/// One piece of a cell's content (text, an image, a reaction bar).
final class ContentNode {
  let kind: String
  var attributes: [String: String]

  init(kind: String, index: Int) {
    self.kind = kind
    self.attributes = ["id": "\(kind)-\(index)", "accessibilityLabel": "\(kind) number \(index)"]
  }
}

/// A cell of the feed, with a few content nodes.
final class CellNode {
  let index: Int
  var contents: [ContentNode]

  init(index: Int) {
    self.index = index
    self.contents = ["text", "image", "reactions"].map { ContentNode(kind: $0, index: index) }
  }
}

/// Owns every cell of the feed: the large graph that is expensive to tear down.
final class DataController {
  var cells: [CellNode]

  init(cellCount: Int) {
    cells = (0..<cellCount).map(CellNode.init(index:))
  }
}

/// A thumbnail that a global cache may keep alive after the feed let go of it.
final class Thumbnail {
  let pixels: [UInt8]

  init(bytes: Int) {
    pixels = [UInt8](repeating: 0x7f, count: bytes)
  }
}

/// A process-wide cache: it holds thumbnails past their screen, then evicts them.
final class ThumbnailCache: @unchecked Sendable {
  // @unchecked: the demo touches the cache from the main thread only.
  static let shared = ThumbnailCache()
  private var entries: [Thumbnail] = []

  func keep(_ thumbnail: Thumbnail) {
    entries.append(thumbnail)
  }

  func evictAll() {
    entries.removeAll()
  }
}

/// A view model whose update closure captures it strongly: a retain cycle, a real leak.
final class ProfileViewModel {
  var onUpdate: (() -> Void)?
  var name = "demo user"

  init() {
    onUpdate = { self.name += "!" }
  }
}

/// The comment thread screen: the screen goes to the queue and is freed, but its first
/// comment and that comment's reply hold each other (`parent` should be weak), so both
/// outlive it. No queue ever held them: only the census (`DEALLOCTRACE_LEAKS=1`) sees them.
final class CommentThreadScreen {
  var comments: [Comment] = []

  init() {
    let question = Comment(text: "Which release is this in?")
    let answer = Comment(text: "The next one.")
    question.reply = answer
    answer.parent = question
    comments = [question]
  }
}

final class Comment {
  let text: String
  var reply: Comment?
  var parent: Comment?

  init(text: String) {
    self.text = text
  }
}
