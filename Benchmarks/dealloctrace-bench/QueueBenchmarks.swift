import DeallocQueue
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

/// A node of the benchmark's object tree.
private final class TreeNode {
  var children: [TreeNode] = []
  var payload = [Int](repeating: 0, count: 4)
}

/// Builds a tree of exactly `count` nodes with a branching factor of 8.
private func makeTree(nodes count: Int) -> TreeNode {
  let root = TreeNode()
  var frontier = [root]
  var made = 1
  var next = 0
  while made < count {
    let parent = frontier[next]
    next += 1
    for _ in 0..<8 where made < count {
      let child = TreeNode()
      parent.children.append(child)
      frontier.append(child)
      made += 1
    }
  }
  return root
}

/// Nanoseconds spent in `body`, on the monotonic clock.
func measureNanoseconds(_ body: () -> Void) -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  body()
  return Double(DispatchTime.now().uptimeNanoseconds - start)
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

/// An element of the benchmark's array: an object as heavy as a tree node, without children.
private final class CellModel {
  var payload = [Int](repeating: 0, count: 4)
}

/// The queue's reason to exist: what the calling thread pays to let go of a large graph,
/// handed to the queue versus dropped synchronously, held by an object (a tree) and by a
/// value (an array of objects, which the queue boxes); and the raw enqueue cost per object.
///
/// Each hand-over comes after a pause in which the previous batch's timer fired and its
/// drain finished, as a screen closed by a user would: the hand-over starts a batch and arms
/// the timer from idle, the case that costs the caller most (a timer already armed for an
/// earlier deadline costs no system call).
func queueFigures(into figures: inout BenchFigures) {
  let nodes = 100_000
  let queue = DeallocQueue(label: "bench", delay: .milliseconds(1))
  let tree = handOverAgainstSynchronousRelease(
    on: queue, make: { makeTree(nodes: nodes) },
    handOver: { (tree: inout TreeNode?) in queue.releaseInBackground(&tree) })
  figures.add("tree_nodes", nodes)
  figures.add("tree_handoff_ns", tree.handOff)
  figures.add("tree_sync_release_ns", tree.synchronous)
  figures.add("tree_handoff_percent_of_sync", 100 * tree.handOff / tree.synchronous)

  let elements = 100_000
  let array = handOverAgainstSynchronousRelease(
    on: queue, make: { (0..<elements).map { _ in CellModel() } },
    handOver: { (cells: inout [CellModel]?) in queue.releaseInBackground(&cells) })
  figures.add("array_elements", elements)
  figures.add("array_handoff_ns", array.handOff)
  figures.add("array_sync_release_ns", array.synchronous)
  figures.add("array_handoff_percent_of_sync", 100 * array.handOff / array.synchronous)

  // The push alone: a delay no round outlasts, so that no drain runs while it is timed.
  let pushQueue = DeallocQueue(label: "bench-push", delay: .seconds(3600))
  let perRound = 200_000
  var perObject: [Double] = []
  for _ in 0..<5 {
    let total = measureNanoseconds {
      for _ in 0..<perRound {
        var object: TreeNode? = TreeNode()
        pushQueue.releaseInBackground(&object)
      }
    }
    pushQueue.drain()
    // Subtract the cost of creating the same objects and parking them without the queue
    // (their destruction is outside both timings).
    var parked: [TreeNode] = []
    parked.reserveCapacity(perRound)
    let floor = measureNanoseconds {
      for _ in 0..<perRound {
        parked.append(TreeNode())
      }
    }
    parked.removeAll()
    perObject.append(max(0, total - floor) / Double(perRound))
  }
  figures.add("enqueue_ns_per_object", median(perObject))
}

/// The medians, over seven rounds, of handing a freshly made graph to `queue` after a pause
/// and of dropping an equal graph synchronously, its floor, timed in the same rounds.
/// `handOver` is written at the graph's concrete type, so that it picks the overload a
/// program would (the object's, or the value's).
private func handOverAgainstSynchronousRelease<Graph>(
  on queue: DeallocQueue, make: () -> Graph, handOver: (inout Graph?) -> Void
) -> (handOff: Double, synchronous: Double) {
  var handOff: [Double] = []
  var synchronous: [Double] = []
  for _ in 0..<7 {
    var graph: Graph? = make()
    handOff.append(measureNanoseconds { handOver(&graph) })
    precondition(graph == nil)
    while queue.pendingCount > 0 { usleep(1_000) }
    queue.waitForDrainsInFlight()
    usleep(20_000)  // the timer's and the target's threads park again
    var dropped: Graph? = make()
    synchronous.append(measureNanoseconds { dropped = nil })
    precondition(dropped == nil)
  }
  return (median(handOff), median(synchronous))
}
