import Foundation
import XCTest

@testable import DeallocTrace

final class JSONLineTests: XCTestCase {
  func testStringsNumbersAndHexRoundTripThroughAJSONReader() throws {
    var line = JSONLine()
    line.begin("mark")
    line.field("label", "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓")
    line.field("t", UInt64.max)
    line.field("neg", -42)
    line.field("obj", hex: 0x7f3a_0000_beef)
    line.field("zero", hex: 0)
    line.field("ok", true)
    line.end()
    XCTAssertEqual(line.bytes.last, UInt8(ascii: "\n"))
    XCTAssertEqual(line.bytes.filter { $0 == UInt8(ascii: "\n") }.count, 1)
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(line.bytes.dropLast())) as? [String: Any])
    XCTAssertEqual(object["ev"] as? String, "mark")
    XCTAssertEqual(
      object["label"] as? String, "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓")
    XCTAssertEqual((object["t"] as? NSNumber)?.uint64Value, UInt64.max)
    XCTAssertEqual(object["neg"] as? Int, -42)
    XCTAssertEqual(object["obj"] as? String, "0x7f3a0000beef")
    XCTAssertEqual(object["zero"] as? String, "0x0")
    XCTAssertEqual(object["ok"] as? Bool, true)
  }
}
