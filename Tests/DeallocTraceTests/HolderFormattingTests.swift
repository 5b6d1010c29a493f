import Foundation
import XCTest

@testable import DeallocTrace

/// The recorder's pure pieces of the `holders` record: hidden addresses written as hex,
/// members merged into a line, and the environment switch.
final class HolderFormattingTests: XCTestCase {
  func testHiddenAddressesAreWrittenAsTheRealAddress() throws {
    for address: UInt in [0, 0x1, 0x7f3a_0000_beef, 0x5611_b00d_7340, UInt.max] {
      var line = JSONLine()
      line.begin("check")
      line.field("obj", hiddenHex: HiddenAddress.hide(address))
      line.end()
      let object = try XCTUnwrap(
        JSONSerialization.jsonObject(with: Data(line.bytes.dropLast())) as? [String: Any])
      XCTAssertEqual(object["obj"] as? String, "0x" + String(address, radix: 16))
      XCTAssertNotEqual(HiddenAddress.hide(address), address)
    }
  }

  func testTheScannersMembersJoinTheRecord() throws {
    var line = JSONLine()
    line.begin("holders")
    line.field("why", "release")
    line.members(
      ofObject: #"{"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[]}],"scan_us":9}"#
    )
    line.end()
    let object = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(line.bytes.dropLast())) as? [String: Any])
    XCTAssertEqual(object["why"] as? String, "release")
    XCTAssertEqual(object["direct"] as? Int, 1)
    XCTAssertEqual(object["scan_us"] as? Int, 9)
    XCTAssertEqual((object["paths"] as? [Any])?.count, 1)

    var malformed = JSONLine()
    malformed.begin("holders")
    malformed.members(ofObject: "[1,2]")
    malformed.end()
    XCTAssertEqual(String(decoding: malformed.bytes, as: UTF8.self), #"{"ev":"holders"}"# + "\n")
  }

  func testTheEnvironmentSwitch() {
    XCTAssertTrue(TraceConfiguration.holders(from: ["DEALLOCTRACE_HOLDERS": "1"]))
    XCTAssertFalse(TraceConfiguration.holders(from: ["DEALLOCTRACE_HOLDERS": "0"]))
    XCTAssertFalse(TraceConfiguration.holders(from: ["DEALLOCTRACE_HOLDERS": ""]))
    XCTAssertFalse(TraceConfiguration.holders(from: [:]))
    let configuration = TraceConfiguration.fromEnvironment(
      ["DEALLOCTRACE_LOG": "/tmp/x.jsonl", "DEALLOCTRACE_HOLDERS": "1"], pid: 7,
      isDirectory: { _ in false })
    XCTAssertEqual(configuration?.holders, true)
    let without = TraceConfiguration.fromEnvironment(
      ["DEALLOCTRACE_LOG": "/tmp/x.jsonl"], pid: 7, isDirectory: { _ in false })
    XCTAssertEqual(without?.holders, false)
  }
}
