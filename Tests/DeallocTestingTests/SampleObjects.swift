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
