import TestSupport

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

/// Raw copies of addresses in live malloc memory, as a C library's cache of pointers it does
/// not retain leaves them: words that point at an object and own nothing. Kept for the
/// process's life, never read.
nonisolated(unsafe) private var staleCopies: [UnsafeMutablePointer<UInt>] = []

/// Writes `object`'s address into a fresh malloc buffer that owns no reference to it.
func leaveAStaleCopy(of object: AnyObject) {
  let buffer = UnsafeMutablePointer<UInt>.allocate(capacity: 4)
  buffer.initialize(repeating: 0, count: 4)
  buffer[2] = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
  staleCopies.append(buffer)
}
