import Foundation
import TestSupport
import XCTest

@testable import DeallocTrace

/// `DEALLOCTRACE_MAX_SIZE`'s default and `0` through a real traced child (TraceProbe
/// `pending-at-exit`, its log named by `DEALLOCTRACE_LOG`). The log is a sparse file that
/// already holds a session and ends just below (or at) the default cap, so reaching a
/// gigabyte costs no disk and no time; the test reads only its tail.
final class MaxSizeEndToEndTests: XCTestCase {
  private var scratch: ScratchDirectory!

  override func setUpWithError() throws {
    scratch = try ScratchDirectory("max-size")
  }

  override func tearDown() {
    scratch?.remove()
  }

  /// How far below the cap the prefilled log ends for the default's test: room for the
  /// child's `session` record, less than its records take (about 3.5 KB).
  private static let roomBelowTheCap: UInt64 = 1024

  /// The bytes of the tail read back: more than the child writes.
  private static let tailBytes: UInt64 = 256 * 1024

  func testWithoutTheVariableTheLogIsCutAtTheDefaultSize() throws {
    let cap = TraceConfiguration.defaultMaxSize
    let log = try prefilledLog(endingAt: cap - Self.roomBelowTheCap)
    let run = try ProbeRun.run(["pending-at-exit"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(
      run.standardError,
      "dealloctrace: log \(log) reached DEALLOCTRACE_MAX_SIZE (\(cap) bytes); later records are"
        + " counted in its end record, not written\n")
    let size = try Self.size(of: log)
    XCTAssertLessThanOrEqual(size, cap)
    XCTAssertGreaterThan(size, cap - Self.roomBelowTheCap, "the child wrote its session")
    let records = try Self.tailRecords(of: log)
    XCTAssertEqual(records.first?["ev"] as? String, "session")
    let cuts = records.filter { $0["ev"] as? String == "cut" }
    XCTAssertEqual(cuts.count, 1)
    XCTAssertEqual(cuts.first?["max_size"] as? UInt64, cap)
    let end = try XCTUnwrap(records.last)
    XCTAssertEqual(end["ev"] as? String, "end")
    XCTAssertGreaterThan(try XCTUnwrap(end["unwritten"] as? Int), 0)
  }

  func testZeroAndUnlimitedLetTheLogGrowPastTheDefaultSize() throws {
    let cap = TraceConfiguration.defaultMaxSize
    for value in ["0", "unlimited"] {
      let log = try prefilledLog(endingAt: cap, name: "unlimited-\(value).jsonl")
      let run = try ProbeRun.run(
        ["pending-at-exit"], environment: ["DEALLOCTRACE_LOG": log, "DEALLOCTRACE_MAX_SIZE": value])
      XCTAssertEqual(run.status, 0, run.standardError)
      XCTAssertEqual(run.standardError, "", value)
      XCTAssertGreaterThan(try Self.size(of: log), cap, value)
      let records = try Self.tailRecords(of: log)
      XCTAssertEqual(records.first?["ev"] as? String, "session", value)
      XCTAssertEqual(records.filter { $0["ev"] as? String == "cut" }.count, 0, value)
      XCTAssertEqual(records.filter { $0["ev"] as? String == "enqueue" }.count, 6, value)
      let end = try XCTUnwrap(records.last)
      XCTAssertEqual(end["ev"] as? String, "end", value)
      XCTAssertNil(end["unwritten"], value)
    }
  }

  /// A log of this user, `size` bytes long: a `session` and an `end` record, then a hole up to
  /// a final newline (sparse: no disk blocks for the hole).
  private func prefilledLog(endingAt size: UInt64, name: String = "capped.jsonl") throws -> String {
    let path = scratch.file(name)
    let text =
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/bin/true","wall":"2026-12-01T00:00:00.000000Z","delay_ms":100,"frames":0}"#
      + "\n" + #"{"ev":"end","t":1,"why":"exit","pending":0,"lost":0}"# + "\n"
    XCTAssertTrue(
      FileManager.default.createFile(
        atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: size - 1)
    try handle.write(contentsOf: Data("\n".utf8))
    return path
  }

  private static func size(of path: String) throws -> UInt64 {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try XCTUnwrap((attributes[.size] as? NSNumber)?.uint64Value)
  }

  /// The records after the prefilled part: the complete JSON lines of the file's tail.
  private static func tailRecords(of path: String) throws -> [[String: Any]] {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    let size = try size(of: path)
    try handle.seek(toOffset: size > tailBytes ? size - tailBytes : 0)
    let tail = try handle.readToEnd() ?? Data()
    return try tail.split(separator: UInt8(ascii: "\n")).filter { $0.first == UInt8(ascii: "{") }
      .map { line in try XCTUnwrap(JSONSerialization.jsonObject(with: line) as? [String: Any]) }
  }
}
