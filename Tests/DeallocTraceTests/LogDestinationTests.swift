import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// Logs that are not regular files: a character device or a FIFO is written as it is, with
/// no lock and no `NAME.<pid>.jsonl` fallback, and a FIFO nobody reads never hangs the host.
final class LogDestinationTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  func testACharacterDeviceHeldByAnotherProcessIsWrittenWithoutAFallbackFile() throws {
    // This process holds the device's lock, as a second traced process would.
    let holder = open("/dev/null", O_WRONLY | O_CLOEXEC)
    XCTAssertGreaterThanOrEqual(holder, 0)
    defer { close(holder) }
    XCTAssertEqual(flock(holder, LOCK_EX | LOCK_NB), 0)
    let before = try strayDeviceFiles()

    let run = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": "/dev/null"])

    let created = try strayDeviceFiles().subtracting(before)
    for name in created { unlink("/dev/" + name) }
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "", "no 'in use' message: a device is not claimed")
    XCTAssertEqual(created, [], "no /dev/null.<pid>.jsonl beside the device")
  }

  func testAFIFOHeldByAnotherProcessDeliversTheWholeLogToItsReader() throws {
    let fifo = directory.appendingPathComponent("trace.fifo")
    XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
    let reader = open(fifo.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    XCTAssertGreaterThanOrEqual(reader, 0)
    defer { close(reader) }
    // A lock held on the FIFO must not send the log elsewhere.
    XCTAssertEqual(flock(reader, LOCK_EX | LOCK_NB), 0)

    let probe = try ProbeRun.launch([], environment: ["DEALLOCTRACE_LOG": fifo.path])
    var received = Data()
    var chunk = [UInt8](repeating: 0, count: 65536)
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      let count = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
      if count > 0 {
        received.append(contentsOf: chunk[..<count])
      } else if count == 0 && probe.hasExited {
        break
      } else {
        usleep(1_000)
      }
    }
    let run = probe.wait()
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardError, "")
    XCTAssertEqual(
      try FileManager.default.contentsOfDirectory(atPath: directory.path), ["trace.fifo"])
    let copy = directory.appendingPathComponent("received.jsonl")
    try received.write(to: copy)
    let parsed = try ParsedLog(contentsOf: copy)
    XCTAssertFalse(parsed.truncatedTail)
    XCTAssertEqual(parsed.records.first?["ev"] as? String, "session")
    XCTAssertEqual(parsed.records.last?["ev"] as? String, "end")
    XCTAssertEqual(parsed.kind("enqueue").count, 5)
  }

  func testAFIFOWithoutAReaderIsReportedAtOnceInsteadOfHangingTheHost() throws {
    let fifo = directory.appendingPathComponent("unread.fifo")
    XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
    // A host that hangs on the open fails the run's timeout; nothing here is timed.
    let run = try ProbeRun.run(
      environment: ["DEALLOCTRACE_LOG": fifo.path, "TRACE_PROBE_EXIT": "3"], timeout: .seconds(20))
    XCTAssertEqual(run.status, 3)
    XCTAssertEqual(
      run.errorLines,
      ["dealloctrace: cannot open log \(fifo.path): No such device or address; tracing is off"])
  }

  /// Files in /dev named like a fallback for `null` (`null.<pid>.jsonl`).
  private func strayDeviceFiles() throws -> Set<String> {
    Set(
      try FileManager.default.contentsOfDirectory(atPath: "/dev").filter { $0.hasPrefix("null.") })
  }
}
