import DeallocQueue
import Testing

/// A checkout screen whose callback captures itself: a retain cycle.
final class SwiftTestingCheckout {
  var onPay: (() -> Void)?
}

@Test func closingTheCheckoutLeaksIt() {
  var checkout: SwiftTestingCheckout? = SwiftTestingCheckout()
  checkout?.onPay = { [checkout] in _ = checkout }
  DeallocQueue.shared.releaseInBackground(&checkout)
  DeallocQueue.shared.drain()
  #expect(checkout == nil)
}

@Test func closingTheSharedCart() {
  closeTheSharedCart()
}
