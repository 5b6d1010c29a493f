import DeallocQueue
import Synchronization

/// A node of a graph the tests let go of; `onDeinit` tells them it really went.
final class Node {
  var next: Node?
  var onChange: (() -> Void)?
  let onDeinit: (@Sendable () -> Void)?

  init(onDeinit: (@Sendable () -> Void)? = nil) {
    self.onDeinit = onDeinit
  }

  deinit {
    onDeinit?()
  }
}

/// Two nodes that keep each other alive: the textbook real leak.
func makeRetainCycle() -> Node {
  let first = Node()
  let second = Node()
  first.next = second
  second.next = first
  return first
}

/// A view model whose closure captures it strongly: a retain cycle through a closure.
func makeClosureCycle() -> Node {
  let node = Node()
  node.onChange = { node.next = nil }
  return node
}

/// A process-wide cache that forgets nothing: whatever it holds survives its release.
enum ForgetfulCache {
  private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

  static func insert(_ object: AnyObject) {
    entries.withLock { $0[ObjectIdentifier(object)] = Entry(object: object) }
  }

  static func remove(_ object: AnyObject) {
    remove(id: ObjectIdentifier(object))
  }

  static func remove(id: ObjectIdentifier) {
    // Released outside the lock: a deinit must not run under it.
    let removed = entries.withLock { $0.removeValue(forKey: id) }
    _ = removed
  }

  /// `@unchecked Sendable`: the cache only keeps its objects alive, it never uses them.
  private struct Entry: @unchecked Sendable {
    let object: AnyObject
  }
}

/// A flag set from a `deinit` on whatever thread runs it.
final class Flag: Sendable {
  private let value = Mutex(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
}

/// Passes one object to another thread, which takes the last strong reference.
///
/// `@unchecked Sendable`: the object is only moved through the lock, never used.
final class Handoff: @unchecked Sendable {
  private let slot: Mutex<Node?>

  init(_ node: sending Node) {
    slot = Mutex(node)
  }

  func take() -> Node? {
    slot.withLock { $0.take() }
  }
}

/// A value set on one thread and read on another (a `deinit`'s observation).
final class Observed<Value: Sendable>: Sendable {
  private let storage: Mutex<Value>
  init(_ value: Value) { storage = Mutex(value) }
  func set(_ value: Value) { storage.withLock { $0 = value } }
  var value: Value { storage.withLock { $0 } }
}
