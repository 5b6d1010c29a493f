import DeallocQueue

/// A node of the demo's feed: a small object graph the queue tears down off-thread.
final class FeedNode {
  var children: [FeedNode] = []
}

var root: FeedNode? = FeedNode()
for _ in 0..<1000 {
  root?.children.append(FeedNode())
}
performBackgroundDeallocation(&root)
print("handed the feed to the queue; pending: \(DeallocQueue.shared.pendingCount)")
DeallocQueue.shared.drain()
print("drained; pending: \(DeallocQueue.shared.pendingCount)")
