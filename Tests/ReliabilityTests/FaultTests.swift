import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// The host keeps running, with its own exit status, whatever happens to the log.
final class FaultTests: XCTestCase {
  private static let total = 3000
  private static let allDeinited = "deinits=3000/3000 missing=0 repeated=0 settled=true"

  func testLogOnDevFullLeavesTheHostRunningWithItsExitStatus() throws {
    let child = try StressChild.run(
      ["workload", "none", "7"], environment: ["DEALLOCTRACE_LOG": "/dev/full"])

    XCTAssertEqual(child.status, 7, child.standardError)
    XCTAssertTrue(child.standardOutput.contains(Self.allDeinited), child.standardOutput)
    XCTAssertTrue(child.standardOutput.contains("tracing=off->off"), child.standardOutput)
    let messages = tracerMessages(child)
    XCTAssertEqual(messages.count, 1, "one line on stderr: \(child.standardError)")
    XCTAssertTrue(messages.first?.contains("/dev/full") == true, child.standardError)
  }

  /// Root ignores permission bits, so the directory is made read-only for real: a read-only
  /// tmpfs mounted over it, else `chattr +i`, else (not root) mode 0555.
  func testLogInReadOnlyDirectoryLeavesTheHostRunningWithItsExitStatus() throws {
    let scratch = try ScratchDirectory("readonly")
    defer { scratch.remove() }
    let directory = scratch.file("locked")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    let protection = try ReadOnlyDirectory(directory)
    defer { protection.undo() }
    print("read-only directory by \(protection.method)")
    XCTAssertNotEqual(creat(directory + "/probe", 0o600), 0, "the directory must refuse files")

    for logPath in [directory + "/trace.jsonl", directory] {
      let child = try StressChild.run(
        ["workload", "none", "5"], environment: ["DEALLOCTRACE_LOG": logPath])

      XCTAssertEqual(child.status, 5, child.standardError)
      XCTAssertTrue(child.standardOutput.contains(Self.allDeinited), child.standardOutput)
      XCTAssertTrue(child.standardOutput.contains("tracing=off->off"), child.standardOutput)
      let messages = tracerMessages(child)
      XCTAssertEqual(messages.count, 1, child.standardError)
      XCTAssertTrue(messages.first?.contains(directory) == true, child.standardError)
    }
    XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
  }

  func testDeletedLogStopsTracingAndTheHostCarriesOn() throws {
    let scratch = try ScratchDirectory("deleted")
    defer { scratch.remove() }
    let log = scratch.file("trace.jsonl")

    let child = try StressChild.run(
      ["workload", "delete-log", "3"], environment: ["DEALLOCTRACE_LOG": log])

    XCTAssertEqual(child.status, 3, child.standardError)
    XCTAssertTrue(child.standardOutput.contains(Self.allDeinited), child.standardOutput)
    XCTAssertTrue(child.standardOutput.contains("tracing=on->off"), child.standardOutput)
    let messages = tracerMessages(child)
    XCTAssertEqual(messages.count, 1, child.standardError)
    XCTAssertTrue(messages.first?.contains("removed") == true, child.standardError)
    XCTAssertFalse(FileManager.default.fileExists(atPath: log), "nothing re-creates the log")
  }

  func testForkedChildLeavesTheParentLogIntact() throws {
    let (child, log, scratch) = try runForking("fork")
    defer { scratch.remove() }
    XCTAssertTrue(child.standardOutput.contains("forked child log=none deinits=200/200"))
    XCTAssertEqual(
      try FileManager.default.contentsOfDirectory(atPath: scratch.path), ["trace.jsonl"],
      "an untraced forked child writes no file")
    _ = log
  }

  func testForkedChildThatTracesGetsAFileOfItsOwn() throws {
    let (child, _, scratch) = try runForking("fork-traced")
    defer { scratch.remove() }
    let forkedPID = try XCTUnwrap(forkedChildPID(child), child.standardOutput)
    let childLog = scratch.file("trace.\(forkedPID).jsonl")
    XCTAssertTrue(
      child.standardOutput.contains("forked child log=\(childLog) deinits=200/200"),
      child.standardOutput)

    let tally = try LogTally.read(childLog)
    XCTAssertEqual(try DeallocAnalysis.analyze([childLog]).warnings.map(\.description), [])
    XCTAssertEqual(tally.sessions.map(\.pid), [Int64(forkedPID)])
    XCTAssertEqual(tally.enqueueCount, 200)
    XCTAssertTrue(tally.objects.values.allSatisfy { $0.releases == 1 && $0.freed })
    XCTAssertEqual(tally.sessions.last?.end?.reason, "exit")
    XCTAssertTrue(tally.marks.allSatisfy { $0.label.hasPrefix("forked child") })
  }

  /// Runs the workload with a fork after its second batch and checks the parent's log:
  /// every line parses, one session, the parent's pid, the parent's objects only.
  private func runForking(_ fault: String) throws -> (ChildRun, String, ScratchDirectory) {
    let scratch = try ScratchDirectory("fork")
    let log = scratch.file("trace.jsonl")
    let child = try StressChild.run(
      ["workload", fault, "4"], environment: ["DEALLOCTRACE_LOG": log])

    XCTAssertEqual(child.status, 4, child.standardError)
    XCTAssertTrue(child.standardOutput.contains(Self.allDeinited), child.standardOutput)
    XCTAssertTrue(child.standardOutput.contains("tracing=on->on"), child.standardOutput)
    XCTAssertTrue(child.standardOutput.contains("status=0"), "the forked child exits 0")
    let forkedPID = try XCTUnwrap(forkedChildPID(child), child.standardOutput)

    let tally = try LogTally.read(log)
    XCTAssertEqual(
      try DeallocAnalysis.analyze([log]).warnings.map(\.description), [],
      "every line of the parent's log parses")
    XCTAssertEqual(tally.sessions.count, 1)
    let parentPID = try XCTUnwrap(tally.sessions.first?.pid)
    XCTAssertNotEqual(parentPID, Int64(forkedPID))
    XCTAssertEqual(tally.enqueueCount, Self.total, "the parent's objects, and only those")
    XCTAssertEqual(tally.releasesOfUnknownIDs, 0)
    XCTAssertTrue(tally.objects.values.allSatisfy { $0.releases == 1 && $0.freed })
    XCTAssertFalse(tally.threadIDs.contains(Int64(forkedPID)), "no record from the forked child")
    XCTAssertFalse(tally.marks.contains { $0.label.hasPrefix("forked child") })
    XCTAssertEqual(tally.sessions.map { $0.end?.reason }, ["exit"])
    XCTAssertEqual(tally.sessions.last?.end?.lost, 0)
    return (child, log, scratch)
  }

  private func forkedChildPID(_ child: ChildRun) -> Int32? {
    guard let range = child.standardOutput.range(of: "forked child pid=") else { return nil }
    return Int32(child.standardOutput[range.upperBound...].prefix { $0.isNumber })
  }

  private func tracerMessages(_ child: ChildRun) -> [Substring] {
    child.standardError.split(separator: "\n").filter { $0.hasPrefix("dealloctrace:") }
  }
}

/// A directory that even root cannot write into, and how that was arranged.
private struct ReadOnlyDirectory {
  enum Method: String {
    case readOnlyMount = "a read-only tmpfs mount"
    case immutable = "chattr +i"
    case permissions = "mode 0555 (not root)"
  }

  let path: String
  let method: Method

  init(_ path: String) throws {
    self.path = path
    if geteuid() != 0 {
      chmod(path, 0o555)
      method = .permissions
    } else if Self.shell("mount -t tmpfs -o ro,size=64k dealloctrace-ro '\(path)'") {
      method = .readOnlyMount
    } else if Self.shell("chattr +i '\(path)'") {
      method = .immutable
    } else {
      throw XCTSkip("running as root without mount or chattr: cannot make \(path) read-only")
    }
  }

  func undo() {
    switch method {
    case .readOnlyMount: _ = Self.shell("umount '\(path)'")
    case .immutable: _ = Self.shell("chattr -i '\(path)'")
    case .permissions: chmod(path, 0o755)
    }
  }

  private static func shell(_ command: String) -> Bool {
    let run = try? ChildProcess(
      URL(fileURLWithPath: "/bin/sh"), ["-c", command], standardError: .discarded
    ).run()
    return run?.status == 0
  }
}
