import XCTest

@testable import DeallocTrace

/// The recorder's small rules of issue 12: sizes, fallback names, escaped messages.
final class RecorderSettingsTests: XCTestCase {
  func testMaxSizeAcceptsBytesAndDecimalAndBinaryUnits() {
    let cases: [(String, UInt64?)] = [
      ("4096", 4096), ("500MB", 500_000_000), ("500mb", 500_000_000), ("1GiB", 1 << 30),
      ("1.5G", 1_500_000_000), ("64 KiB", 65_536), ("2TB", 2_000_000_000_000), ("10B", 10),
      ("0", 0), ("unlimited", 0), ("none", 0), ("", nil), ("MB", nil), ("-1", nil),
      ("1..2", nil), ("12 parsecs", nil), ("99999999999999999999TB", nil),
    ]
    for (text, expected) in cases {
      XCTAssertEqual(TraceConfiguration.parseSize(text), expected, text)
    }
  }

  func testMaxSizeDefaultsAndWarnsOnceOnABadValue() {
    var warnings: [DeallocTraceError] = []
    XCTAssertEqual(TraceConfiguration.maxSize(from: [:]), TraceConfiguration.defaultMaxSize)
    XCTAssertNil(TraceConfiguration.maxSize(from: ["DEALLOCTRACE_MAX_SIZE": "0"]))
    XCTAssertEqual(
      TraceConfiguration.maxSize(from: ["DEALLOCTRACE_MAX_SIZE": "lots"]) { warnings.append($0) },
      TraceConfiguration.defaultMaxSize)
    XCTAssertEqual(warnings.count, 1)
    // It says which cap applies instead.
    XCTAssertEqual(
      warnings.first?.description,
      "dealloctrace: DEALLOCTRACE_MAX_SIZE=lots is not a size (bytes, or with a unit: 500MB, 1GiB;"
        + " 0 or unlimited for none); the default cap, 1 GiB (1073741824 bytes), applies")
  }

  func testFallbackNamesStayJSONLFiles() {
    XCTAssertEqual(LogFile.fallbackPath(for: "/ci/run.jsonl", pid: 42), "/ci/run.42.jsonl")
    XCTAssertEqual(LogFile.fallbackPath(for: "/ci/trace", pid: 42), "/ci/trace.42.jsonl")
    XCTAssertEqual(LogFile.fallbackPath(for: "/ci/.jsonl", pid: 42), "/ci/.jsonl.42.jsonl")
    XCTAssertEqual(LogFile.fallbackPath(for: "log.json", pid: 7), "log.json.7.jsonl")
  }

  func testPathsInMessagesAreEscaped() {
    let path = "/tmp/x\n::stop-commands::y\u{1b}[2J\u{202e}\\"
    let message = DeallocTraceError.cannotOpen(path: path, errno: ENOENT).description
    XCTAssertFalse(message.contains("\n"))
    XCTAssertFalse(message.contains("\u{1b}"))
    XCTAssertFalse(message.contains("\u{202e}"))
    XCTAssertTrue(
      message.hasPrefix(
        #"dealloctrace: cannot open log /tmp/x\u{a}::stop-commands::y\u{1b}[2J\u{202e}\\: "#),
      message)
  }
}
