import DeallocWire
import Foundation
import TestSupport
import XCTest

@testable import DeallocLog

/// What the recorder really writes takes the reader's fast path: a key order changed in the
/// writer alone would send every line to the general parser, twice as slow and never wrong,
/// so only this test would notice.
final class WireFastPathTests: XCTestCase {
  func testEveryEnqueueAndReleaseLineOfARecordedProgramTakesTheFastPath() throws {
    let directory = try ScratchDirectory("wire").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let log = directory.appendingPathComponent("probe.jsonl")
    let run = try ProbeRun.run(["scenario"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let text = try String(contentsOf: log, encoding: .utf8)
    var counts: [String: (lines: Int, fast: Int)] = [:]
    var interner = StringInterner()
    for line in text.split(separator: "\n") {
      let kind: String
      if line.hasPrefix(#"{"\#(WireKey.kind)":"\#(WireKind.enqueue)""#) {
        kind = "enqueue"
      } else if line.hasPrefix(#"{"\#(WireKey.kind)":"\#(WireKind.release)""#) {
        kind = "release"
      } else {
        continue
      }
      var bytes = Array(line.utf8)
      let fast = bytes.withUnsafeMutableBufferPointer {
        RecorderShapeParser.parse(UnsafeBufferPointer($0), interner: &interner) != nil
      }
      XCTAssertTrue(fast, "not on the fast path: \(line)")
      counts[kind, default: (0, 0)].lines += 1
      if fast { counts[kind, default: (0, 0)].fast += 1 }
    }
    for kind in ["enqueue", "release"] {
      let count = try XCTUnwrap(counts[kind], "the probe wrote no \(kind) line:\n\(text)")
      XCTAssertGreaterThan(count.lines, 0)
      XCTAssertEqual(count.fast, count.lines, "\(kind): \(count.fast) of \(count.lines) fast")
    }
  }
}
