import DeallocQueue

/// A cart model whose callback captures itself: a retain cycle, made by one helper that an
/// XCTest method and a Swift Testing function both call.
final class SharedCartModel {
  var onChange: (() -> Void)?
}

/// Not inlined, so that a release build keeps the helper's frame as a debug build does.
@inline(never)
func closeTheSharedCart() {
  var model: SharedCartModel? = SharedCartModel()
  model?.onChange = { [model] in _ = model }
  DeallocQueue.shared.releaseInBackground(&model)
  DeallocQueue.shared.drain()
}
