import Foundation
import TestSupport
import XCTest

/// Hosts built with a sanitizer (`scripts/tsan`, `scripts/asan` build this target and
/// `TraceProbe` with it). Under ThreadSanitizer, holder scans are refused: its shadow and
/// allocator are not taught to the scan. The host must say so in one line and trace on
/// without them. Under AddressSanitizer, holders run on ASan's allocator (CHolders' asan.c);
/// the leak census, which reads glibc's chunk headers, says in its one line why it cannot.
final class SanitizedHostTests: XCTestCase {
  private static func runsUnder(_ symbol: String) -> Bool {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol) != nil
  }

  func testAThreadSanitizedHostRefusesReferenceScansInOneLineAndTracesOn() throws {
    try XCTSkipIf(
      !Self.runsUnder("__tsan_init"),
      "only a ThreadSanitizer build can show the refusal (scripts/tsan)")
    let scratch = try ScratchDirectory("sanitized-host")
    defer { scratch.remove() }
    let log = scratch.url.appendingPathComponent("sanitized.jsonl")

    let run = try ProbeRun.run(
      ["holders", "global-array"],
      environment: ["DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_HOLDERS": "1"])

    XCTAssertEqual(run.status, 0, run.standardError)
    let refusals = run.standardError.split(separator: "\n").filter {
      $0.contains("holders off: this process runs under a sanitizer (ThreadSanitizer)")
    }
    XCTAssertEqual(refusals.count, 1, run.standardError)
    let text = try String(contentsOf: log, encoding: .utf8)
    XCTAssertFalse(text.contains(#""holders":true"#), text)
    XCTAssertFalse(text.contains(#""ev":"holders""#), text)
    XCTAssertTrue(text.contains(#""ev":"release""#), text)
  }

  /// The scan finds the global that holds the survivor through ASan's answers (the block's
  /// size, the shadow left out); before asan.c, holders were refused here. The census's
  /// record carries the reason it cannot run, and the sanitizer reports nothing.
  func testAnAddressSanitizedHostRecordsHoldersAndTheCensusSaysWhyItCannotRun() throws {
    try XCTSkipIf(
      !Self.runsUnder("__asan_init"), "only an AddressSanitizer build runs this (scripts/asan)")
    let scratch = try ScratchDirectory("sanitized-host")
    defer { scratch.remove() }
    let log = scratch.url.appendingPathComponent("sanitized.jsonl")

    let run = try ProbeRun.run(
      ["holders", "global-array"],
      environment: [
        "DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_HOLDERS": "1", "DEALLOCTRACE_LEAKS": "1",
      ])

    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertFalse(run.standardError.contains("AddressSanitizer"), run.standardError)
    XCTAssertFalse(run.standardError.contains("holders off"), run.standardError)
    let text = try String(contentsOf: log, encoding: .utf8)
    let holders = text.split(separator: "\n").filter { $0.contains(#""ev":"holders""#) }
    XCTAssertEqual(holders.count, 2, text)
    for record in holders {
      XCTAssertTrue(record.contains(#""sym":"TraceProbe.HolderCache.shared""#), text)
      XCTAssertTrue(record.contains(#""field":"keep""#), text)
    }
    let census = text.split(separator: "\n").filter { $0.contains(#""ev":"census""#) }
    XCTAssertEqual(census.count, 1, text)
    XCTAssertTrue(
      census.first?.contains(#""error":"this process runs under AddressSanitizer"#) ?? false,
      text)
  }
}
