import Foundation
import TestSupport
import XCTest

/// The recorder under an address-space limit (`setrlimit(RLIMIT_AS)`, as `ulimit -v`): the
/// child (`StressChild limited`) limits itself to what it maps plus a headroom, executes
/// itself again under that limit, hands 201 objects to the shared queue and waits, bounded,
/// for its timer to drain them. Untraced, they drain; traced, the recorder must leave the
/// host the room it needs (they drained never), say so once on stderr and in a `memory`
/// record, and holders must refuse with one line instead of taking the room (the host died
/// on an allocation failure).
final class AddressSpaceLimitTests: XCTestCase {
  /// Above what the untraced child needs on this machine (it drains with 30 MiB), below what
  /// the recorder used to take on top of it (an 8 MiB writer stack and 5 MiB of buffers).
  static let headroomMiB = "40"

  override func setUpWithError() throws {
    // A sanitizer's shadow reserves terabytes of address space: under any limit these tests
    // set, a sanitized child cannot even start. They run in the plain suite.
    let sanitized = ["__tsan_init", "__asan_init"].contains { (symbol: String) in
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), symbol) != nil
    }
    try XCTSkipIf(sanitized, "address-space limits cannot hold a sanitizer's shadow")
  }

  func testUntracedTheQueueDrainsUnderTheLimit() throws {
    // The control: a failure here means the headroom is too small for this machine.
    let run = try limited([], environment: [:])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(run.standardOutput.contains("limited drained=201 of 201"), run.standardOutput)
    XCTAssertEqual(run.standardError, "")
  }

  func testTracedTheQueueDrainsAndTheLimitIsSaidOnceAndRecorded() throws {
    let folder = try ScratchDirectory("address-space")
    defer { folder.remove() }
    let log = folder.file("limited.jsonl")
    let run = try limited([], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(run.standardOutput.contains("limited drained=201 of 201"), run.standardOutput)
    let lines = run.standardError.split(separator: "\n", omittingEmptySubsequences: false)
    XCTAssertEqual(lines.count, 2, run.standardError)  // one line and its newline
    XCTAssertTrue(
      lines.first?.hasPrefix("dealloctrace: the address space is limited (ulimit -v) to ") ?? false,
      run.standardError)
    try assertMemoryRecord(log)
  }

  func testHoldersRefuseWithOneLineAndTheQueueStillDrains() throws {
    let folder = try ScratchDirectory("address-space-holders")
    defer { folder.remove() }
    let log = folder.file("limited.jsonl")
    let run = try limited(["holders"], environment: ["DEALLOCTRACE_LOG": log])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(run.standardOutput.contains("limited drained=201 of 201"), run.standardOutput)
    let lines = run.standardError.split(separator: "\n")
    XCTAssertEqual(lines.count, 2, run.standardError)
    XCTAssertTrue(
      lines.first?.hasPrefix("dealloctrace: holders off: the address space is limited") ?? false,
      run.standardError)
    try assertMemoryRecord(log)
    let session = try XCTUnwrap(
      String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").first)
    XCTAssertFalse(session.contains(#""holders":true"#), String(session))
  }

  /// A scan that runs out of memory (the limit set after holders started, far below what a
  /// scan reserves): one stderr line, the object counted in `end`'s `holder_scans_failed`,
  /// and the host goes on; the scan at the session's end, with the limit lifted, works.
  func testAHolderScanThatRunsOutOfMemoryIsSaidOnceAndCounted() throws {
    let folder = try ScratchDirectory("holder-memory")
    defer { folder.remove() }
    let log = folder.file("holders.jsonl")
    let run = try ChildProcess(
      try StressChild.executable(), ["holder-memory"],
      environment: ChildEnvironment.inherited(adding: [
        "DEALLOCTRACE_LOG": log, "DEALLOCTRACE_HOLDERS": "1",
      ])
    ).run(timeout: .seconds(120))
    XCTAssertFalse(run.timedOut, "StressChild holder-memory did not finish within 120 s")
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(run.standardOutput.contains("holder-memory done"), run.standardOutput)
    XCTAssertEqual(
      run.standardError,
      "dealloctrace: a holder scan ran out of memory; objects it looked for have no holders"
        + " record (counted in the log's end record, holder_scans_failed)\n")
    let records = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
      .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let end = try XCTUnwrap(records.last { $0["ev"] as? String == "end" }, "\(records)")
    XCTAssertEqual(end["holder_scans_failed"] as? Int, 1, "\(end)")
    let scans = records.filter { $0["ev"] as? String == "holders" }
    XCTAssertEqual(scans.map { $0["why"] as? String }, ["end"], "\(scans)")
  }

  private func limited(_ extra: [String], environment: [String: String]) throws -> ChildRun {
    let executable = try StressChild.executable()
    let run = try ChildProcess(
      executable, ["limited", Self.headroomMiB] + extra,
      environment: ChildEnvironment.inherited(adding: environment)
    ).run(timeout: .seconds(120))
    XCTAssertFalse(run.timedOut, "StressChild limited did not finish within 120 s")
    return run
  }

  /// The `memory` record right after `session`, with the smaller buffer, and a log that
  /// keeps the contract.
  private func assertMemoryRecord(_ log: String, line: UInt = #line) throws {
    let records = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    guard records.count > 2 else {
      XCTFail("no memory record and end in \(records)", line: line)
      return
    }
    let memory = try XCTUnwrap(
      JSONSerialization.jsonObject(with: Data(records[1].utf8)) as? [String: Any], line: line)
    XCTAssertEqual(memory["ev"] as? String, "memory", String(records[1]), line: line)
    XCTAssertEqual(memory["buffer"] as? Int, 1024, String(records[1]), line: line)
    let limit = try XCTUnwrap(memory["as_limit"] as? Int, line: line)
    let free = try XCTUnwrap(memory["as_free"] as? Int, line: line)
    XCTAssertGreaterThan(free, 0, line: line)
    XCTAssertLessThan(free, limit, line: line)
    XCTAssertTrue(
      records.last?.contains(#""ev":"end""#) ?? false, String(records.last ?? ""), line: line)
    if let (status, output) = ContractValidator.verdict(for: URL(fileURLWithPath: log)) {
      XCTAssertEqual(status, 0, output, line: line)
    }
  }
}
