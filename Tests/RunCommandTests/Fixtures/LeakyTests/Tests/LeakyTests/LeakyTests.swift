import Leaky
import XCTest

final class LeakyTests: XCTestCase {
  func testOpenDocument() {
    XCTAssertEqual(openDocument(), 1)
  }
}
