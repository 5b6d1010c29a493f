import DeallocQueue
import DeallocTrace
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// What the runtime hooks must survive (issue 10, and the Swift 6.3 adapter bug in
// notes-holders.md: an immortal string literal's bridge value retained through the swizzled
// path crashed ordinary programs). Each part does what ordinary code does; the test only
// asks that the process gets to `survived` and exits 0.

final class SurvivalNode {
  var next: SurvivalNode?
  weak var parent: SurvivalNode?
  unowned let root: SurvivalRoot
  var label: String

  init(root: SurvivalRoot, label: String) {
    self.root = root
    self.label = label
  }
}

final class SurvivalRoot {
  var children: [SurvivalNode] = []
  var handlers: [String: () -> Int] = [:]
}

/// Strings collected by dispatched work items, under a lock.
final class SurvivalCollection: @unchecked Sendable {
  // @unchecked: `items` is only touched under `lock`.
  private let lock = NSLock()
  private var items: [String] = []

  func add(_ more: [String]) {
    lock.lock()
    items.append(contentsOf: more)
    lock.unlock()
  }

  var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return items.count
  }
}

actor SurvivalCounter {
  private var total = 0

  func add(_ value: Int) -> Int {
    total += value
    return total
  }
}

func runHolderSurvival() {
  // Long string literals (not small-string inline: immortal, with a bridge value) copied
  // into arrays and dictionaries, many times.
  var texts: [String] = []
  var table: [String: [String]] = [:]
  for round in 0..<2_000 {
    let literal = "a long string literal that does not fit in a small string, round"
    texts.append(literal)
    texts.append(literal + " \(round)")
    table[literal, default: []].append("another long literal that lives in rodata forever")
  }

  // Closures capturing objects and values, weak and unowned references.
  let root = SurvivalRoot()
  for index in 0..<500 {
    let node = SurvivalNode(root: root, label: "node \(index) with a long enough label text")
    node.parent = root.children.last
    root.children.last?.next = node
    root.children.append(node)
    root.handlers["h\(index)"] = { [weak node, unowned root] in
      (node?.label.count ?? 0) + root.children.count
    }
  }
  var sum = 0
  for handler in root.handlers.values { sum &+= handler() }
  for node in root.children { sum &+= (node.parent?.label.count ?? 0) + node.root.children.count }

  // libdispatch: concurrent work and a group.
  let group = DispatchGroup()
  let collected = SurvivalCollection()
  for index in 0..<64 {
    DispatchQueue.global().async(group: group) {
      let text = "dispatched work item with a long string literal \(index)"
      collected.add(Array(repeating: text, count: 8))
    }
  }
  group.wait()

  // Async tasks and an actor, waited for with a semaphore (top-level code stays sync).
  let done = DispatchSemaphore(value: 0)
  let counter = SurvivalCounter()
  Task.detached {
    await withTaskGroup(of: Int.self) { tasks in
      for index in 0..<100 {
        tasks.addTask {
          let words = ["task", "with", "a long literal that is not small", "\(index)"]
          return await counter.add(words.joined(separator: " ").count)
        }
      }
      for await _ in tasks {}
    }
    done.signal()
  }
  done.wait()

  // The queue too, with survivors and releases under the hooks.
  var keep: [SurvivalNode] = []
  for node in root.children.prefix(20) {
    keep.append(node)
    var handed: SurvivalNode? = node
    DeallocQueue.shared.releaseInBackground(&handed)
  }
  DeallocQueue.shared.drain()
  keep.removeAll()
  root.children.removeAll()
  root.handlers.removeAll()

  print("survived \(texts.count) \(table.count) \(collected.count) \(sum > 0)")
}
