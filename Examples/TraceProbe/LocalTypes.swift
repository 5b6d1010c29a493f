import DeallocQueue

/// Hands an object of a type declared in this function to the queue, and one of a type
/// nested in a local struct.
@inline(never)
func handOverLocalOrder() {
  final class Order {}
  struct Screen {
    final class Cell {}
  }
  var order: Order? = Order()
  DeallocQueue.shared.releaseInBackground(&order)
  var cell: Screen.Cell? = Screen.Cell()
  DeallocQueue.shared.releaseInBackground(&cell)
}

func runLocalTypes() {
  handOverLocalOrder()
  DeallocQueue.shared.drain()
}
