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

  /// The recorder escapes by the reader side's JSON policy: a type name that would reorder
  /// or colour a terminal showing the raw log (DEL, a C1 control, U+2028, a bidirectional
  /// override) is written as `\u` escapes, and still decodes to the same name.
  func testHostileNamesAreEscapedAsEveryReportEscapesThem() throws {
    let name = "Shop.\u{7F}Evil\u{85}\u{2028}\u{202E}Thumb"
    var line = JSONLine()
    line.begin("mark")
    line.field("label", name)
    line.end()
    let text = String(decoding: line.bytes, as: UTF8.self)
    XCTAssertTrue(
      text.contains(#""label":"Shop.\u007fEvil\u0085\u2028\u202eThumb""#), text)
    XCTAssertFalse(text.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x7F })
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(line.bytes.dropLast())) as? [String: Any])
    XCTAssertEqual(object["label"] as? String, name)
  }
}
