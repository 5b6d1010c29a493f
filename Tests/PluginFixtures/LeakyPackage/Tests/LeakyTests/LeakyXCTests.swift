import DeallocQueue
import XCTest

/// A view model whose callback captures itself: a retain cycle.
final class XCTestCartModel {
  var onChange: (() -> Void)?
}

final class LeakyXCTests: XCTestCase {
  func testClosingTheCartLeaksItsModel() {
    var model: XCTestCartModel? = XCTestCartModel()
    model?.onChange = { [model] in _ = model }
    DeallocQueue.shared.releaseInBackground(&model)
    DeallocQueue.shared.drain()
    XCTAssertNil(model)
  }

  func testClosingTheSharedCart() {
    closeTheSharedCart()
  }
}
