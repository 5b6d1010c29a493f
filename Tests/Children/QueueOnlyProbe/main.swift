import DeallocQueue

// A program that uses DeallocQueue without DeallocTrace: the child of the `dealloctrace run`
// test for a census that cannot ask the queues what they hold. It hands one object to a
// queue whose delay outlasts the program, and exits.

/// What waits in the queue at exit.
final class QueuedDocument {
  let pages = [1, 2, 3]
}

let queue = DeallocQueue(label: "slow", delay: .seconds(600))
var document: QueuedDocument? = QueuedDocument()
queue.releaseInBackground(&document)
print("queued=\(document == nil)")
