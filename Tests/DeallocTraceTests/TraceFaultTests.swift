import Foundation
import TestSupport
import XCTest

/// The recorder never breaks the host: I/O failures, kills, forks and shared paths.
final class TraceFaultTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  func testSIGKILLMidRunLeavesALogWhoseCompleteLinesAllParse() throws {
    var random = SeededRandom.printed(for: "TraceFaultTests")
    for round in 0..<3 {
      let log = directory.appendingPathComponent("killed-\(round).jsonl")
      let probe = try ProbeRun.launch(["forever"], environment: ["DEALLOCTRACE_LOG": log.path])
      XCTAssertTrue(probe.waitForLine("ready"))
      usleep(UInt32.random(in: 10_000...200_000, using: &random))
      probe.signal(SIGKILL)
      let run = probe.wait()
      XCTAssertEqual(run.signal, SIGKILL)
      let parsed = try ParsedLog(contentsOf: log)
      XCTAssertEqual(parsed.records.first?["ev"] as? String, "session")
      XCTAssertTrue(parsed.kind("end").isEmpty)
      // "ready" came after three rounds and a flush: those records are in the file.
      XCTAssertGreaterThanOrEqual(parsed.kind("enqueue").count, 150)
      XCTAssertTrue(parsed.kind("mark").contains { $0["label"] as? String == "round 2" })
    }
  }

  func testDiskFullIsReportedOnceAndTheExitStatusIsUnchanged() throws {
    let run = try ProbeRun.run(environment: [
      "DEALLOCTRACE_LOG": "/dev/full", "TRACE_PROBE_EXIT": "3",
    ])
    XCTAssertEqual(run.status, 3)
    XCTAssertEqual(run.errorLines.count, 1, run.standardError)
    XCTAssertTrue(run.standardError.contains("/dev/full"), run.standardError)
    XCTAssertTrue(run.standardError.hasPrefix("dealloctrace: "), run.standardError)
  }

  /// `/dev/full` fails at the header, inside `start`; these fail in the middle of a run,
  /// on the writer thread, after records were written.
  func testAFileSizeLimitReachedMidRunIsReportedOnceAndTheProgramCarriesOn() throws {
    let log = directory.appendingPathComponent("limited.jsonl")
    let run = try ProbeRun.run(
      ["fill-log"],
      environment: [
        "DEALLOCTRACE_LOG": log.path, "TRACE_PROBE_FILE_LIMIT": "30000", "TRACE_PROBE_EXIT": "4",
      ])
    try assertStoppedMidRun(run, log: log, reason: "File too large")
  }

  func testAFileSystemThatFillsUpMidRunIsReportedOnceAndTheProgramCarriesOn() throws {
    let mountPoint = directory.appendingPathComponent("small")
    try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: false)
    guard geteuid() == 0, shell("mount -t tmpfs -o size=64k dealloctrace-full '\(mountPoint.path)'")
    else {
      throw XCTSkip("needs root and mount for a small tmpfs (the file size limit test covers it)")
    }
    defer { _ = shell("umount '\(mountPoint.path)'") }
    let log = mountPoint.appendingPathComponent("full.jsonl")
    let run = try ProbeRun.run(
      ["fill-log"], environment: ["DEALLOCTRACE_LOG": log.path, "TRACE_PROBE_EXIT": "4"])
    try assertStoppedMidRun(run, log: log, reason: "No space left on device")
  }

  private func assertStoppedMidRun(
    _ run: ChildRun, log: URL, reason: String, file: StaticString = #filePath, line: UInt = #line
  ) throws {
    XCTAssertEqual(run.status, 4, run.standardError, file: file, line: line)
    XCTAssertEqual(
      run.errorLines, ["dealloctrace: cannot write log \(log.path): \(reason); tracing stopped"],
      file: file, line: line)
    let rounds = run.standardOutput.split(separator: " ").dropFirst(2).first.flatMap { Int($0) }
    XCTAssertEqual(
      run.standardOutput, "stopped after \(rounds ?? -1) rounds, tracing off\n", file: file,
      line: line)
    XCTAssertGreaterThan(
      rounds ?? 0, 1, "records were written before the failure", file: file, line: line)
    let parsed = try ParsedLog(contentsOf: log, file: file, line: line)
    XCTAssertEqual(parsed.records.first?["ev"] as? String, "session", file: file, line: line)
    XCTAssertTrue(
      parsed.kind("mark").contains { $0["label"] as? String == "fill 0" }, file: file, line: line)
    XCTAssertTrue(
      parsed.kind("end").isEmpty, "a stopped session has no end", file: file, line: line)
  }

  private func shell(_ command: String) -> Bool {
    let run = try? ChildProcess(
      URL(fileURLWithPath: "/bin/sh"), ["-c", command], standardError: .discarded
    ).run()
    return run?.status == 0
  }

  func testUnwritablePathsAreReportedOnceAndTheExitStatusIsUnchanged() throws {
    let notADirectory = directory.appendingPathComponent("plain-file")
    try Data("x".utf8).write(to: notADirectory)
    let paths = [
      notADirectory.appendingPathComponent("log.jsonl").path,
      directory.appendingPathComponent("missing/dir/log.jsonl").path,
    ]
    for path in paths {
      let run = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": path, "TRACE_PROBE_EXIT": "3"])
      XCTAssertEqual(run.status, 3)
      XCTAssertEqual(run.errorLines.count, 1, run.standardError)
      XCTAssertTrue(
        run.standardError.hasPrefix("dealloctrace: cannot open log \(path): "), run.standardError)
      XCTAssertTrue(run.standardError.contains(path), run.standardError)
      XCTAssertTrue(run.standardError.contains("tracing is off"), run.standardError)
    }
  }

  func testASymlinkAtThePathIsNotFollowed() throws {
    let target = directory.appendingPathComponent("target.jsonl")
    try Data().write(to: target)
    let link = directory.appendingPathComponent("link.jsonl")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
    let run = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": link.path])
    XCTAssertEqual(run.status, 0)
    XCTAssertEqual(run.errorLines.count, 1, run.standardError)
    XCTAssertEqual(try Data(contentsOf: target).count, 0)
  }

  func testADeletedLogStopsTracingWithOneLineAndTheProgramCarriesOn() throws {
    let log = directory.appendingPathComponent("deleted.jsonl")
    let run = try ProbeRun.run(["delete-log"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0)
    XCTAssertEqual(
      run.errorLines, ["dealloctrace: log \(log.path) was removed while recording; tracing stopped"]
    )
    XCTAssertEqual(run.standardOutput, "still running, tracing off\n")
  }

  func testAForkedChildNeverWritesIntoItsParentsLog() throws {
    let log = directory.appendingPathComponent("fork.jsonl")
    let run = try ProbeRun.run(["fork"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(run.standardOutput, "child exit 0\n")
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("session").count, 1)
    XCTAssertEqual(parsed.kind("end").count, 1)
    XCTAssertFalse(parsed.kind("mark").contains { $0["label"] as? String == "child mark" })
    let pid = try XCTUnwrap(parsed.kind("session").first?["pid"] as? Int)
    let tids = Set(parsed.records.compactMap { $0["tid"] as? Int })
    XCTAssertTrue(tids.contains(pid))
    // Only the parent's 1 + 5 scenario objects; none of the child's 20.
    XCTAssertEqual(parsed.kind("enqueue").count, 6)
    if let verdict = ContractValidator.verdict(for: log) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
    }
  }

  func testASecondProcessGivenTheSamePathWritesElsewhereAndSaysSo() throws {
    let log = directory.appendingPathComponent("shared.jsonl")
    let first = try ProbeRun.launch(["forever"], environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertTrue(first.waitForLine("ready"))
    let second = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": log.path])
    first.stop()
    XCTAssertEqual(second.status, 0)
    XCTAssertEqual(second.errorLines.count, 1, second.standardError)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      .filter { $0.hasPrefix("shared.") && $0.hasSuffix(".jsonl") && $0 != "shared.jsonl" }
    XCTAssertEqual(files.count, 1)
    let alternative = directory.appendingPathComponent(try XCTUnwrap(files.first))
    XCTAssertTrue(second.standardError.contains(alternative.path), second.standardError)
    let secondLog = try ParsedLog(contentsOf: alternative)
    XCTAssertEqual(secondLog.kind("session").count, 1)
    XCTAssertEqual(secondLog.kind("end").first?["lost"] as? Int, 0)
    let firstLog = try ParsedLog(contentsOf: log)
    XCTAssertEqual(firstLog.kind("session").count, 1)
    XCTAssertEqual(
      Set(firstLog.kind("session").compactMap { $0["pid"] as? Int }),
      [Int(first.pid)])
  }
}
