import XCTest

final class HolderPathTests: XCTestCase {
  func testPlaceholder() {}
}
