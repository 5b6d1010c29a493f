import Foundation
import TestSupport
import XCTest

/// Under ThreadSanitizer or AddressSanitizer (`scripts/tsan`, `scripts/asan` build this target
/// and `TraceProbe` with it), holder scans are refused: the sanitizer's shadow is terabytes
/// of writable memory that no scan can read, and AddressSanitizer's allocator has none of
/// the glibc chunk headers the registry reads. The host must say so in one line and trace
/// on without them.
final class SanitizedHostTests: XCTestCase {
  func testASanitizedHostRefusesReferenceScansInOneLineAndTracesOn() throws {
    let sanitized = ["__tsan_init", "__asan_init"].contains { (symbol: String) in
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol) != nil
    }
    try XCTSkipIf(
      !sanitized, "only a sanitized build can show the refusal (scripts/tsan, scripts/asan)")
    let scratch = try ScratchDirectory("sanitized-host")
    defer { scratch.remove() }
    let log = scratch.url.appendingPathComponent("sanitized.jsonl")

    let run = try ProbeRun.run(
      ["holders", "global-array"],
      environment: ["DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_HOLDERS": "1"])

    XCTAssertEqual(run.status, 0, run.standardError)
    let refusals = run.standardError.split(separator: "\n").filter {
      $0.contains("holders off: this process runs under a sanitizer")
    }
    XCTAssertEqual(refusals.count, 1, run.standardError)
    let text = try String(contentsOf: log, encoding: .utf8)
    XCTAssertFalse(text.contains(#""holders":true"#), text)
    XCTAssertFalse(text.contains(#""ev":"holders""#), text)
    XCTAssertTrue(text.contains(#""ev":"release""#), text)
  }
}
