import DeallocQueue

/// Keeps the local `Order` alive after the queue releases it, so that a type declared in a
/// function is also a finding (its id must not carry the context's address).
nonisolated(unsafe) var keptLocalOrder: AnyObject?

/// Hands an object of a type declared in this function to the queue (and keeps it: a
/// leak), and one of a type nested in a local struct.
@inline(never)
func handOverLocalOrder() {
  final class Order {}
  struct Screen {
    final class Cell {}
  }
  var order: Order? = Order()
  keptLocalOrder = order
  DeallocQueue.shared.releaseInBackground(&order)
  var cell: Screen.Cell? = Screen.Cell()
  DeallocQueue.shared.releaseInBackground(&cell)
}

func runLocalTypes() {
  handOverLocalOrder()
  DeallocQueue.shared.drain()
}
