import DeallocHooks
import DeallocQueue
import Foundation
import TestSupport
import XCTest

@testable import DeallocTrace

/// How the environment turns tracing on: unit checks of the parsing, then real children.
final class TraceConfigurationTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    directory = try ScratchDirectory("trace").url
  }

  override func tearDownWithError() throws {
    try? FileManager.default.removeItem(at: directory)
  }

  private func configuration(
    _ environment: [String: String], directories: Set<String> = [], warnings: inout [String]
  ) -> TraceConfiguration? {
    var collected: [String] = []
    let result = TraceConfiguration.fromEnvironment(
      environment, pid: 42, isDirectory: { directories.contains($0) },
      warn: { collected.append($0.description) })
    warnings = collected
    return result
  }

  func testParsingTheVariables() {
    var warnings: [String] = []
    XCTAssertNil(configuration([:], warnings: &warnings))
    XCTAssertNil(configuration(["DEALLOCTRACE": "0"], warnings: &warnings))
    XCTAssertEqual(
      configuration(["DEALLOCTRACE": "1"], warnings: &warnings),
      TraceConfiguration(path: "./dealloctrace.42.jsonl", frames: 32))
    XCTAssertEqual(
      configuration(["DEALLOCTRACE_LOG": "/logs/run-%p.jsonl"], warnings: &warnings)?.path,
      "/logs/run-42.jsonl")
    XCTAssertEqual(
      configuration(["DEALLOCTRACE_LOG": "/logs"], directories: ["/logs"], warnings: &warnings)?
        .path,
      "/logs/dealloctrace.42.jsonl")
    XCTAssertEqual(
      configuration(
        ["DEALLOCTRACE_LOG": "/x.jsonl", "DEALLOCTRACE_FRAMES": "0"], warnings: &warnings)?
        .frames, 0)
    XCTAssertEqual(
      configuration(
        ["DEALLOCTRACE_LOG": "/x.jsonl", "DEALLOCTRACE_FRAMES": "9999"], warnings: &warnings)?
        .frames, TraceConfiguration.maxFrames)
    XCTAssertTrue(warnings.isEmpty)
    let frames = configuration(
      ["DEALLOCTRACE_LOG": "/x.jsonl", "DEALLOCTRACE_FRAMES": "many"], warnings: &warnings)?.frames
    XCTAssertEqual(frames, 32)
    XCTAssertEqual(warnings, ["dealloctrace: DEALLOCTRACE_FRAMES=many is not a number ≥ 0"])
    var framesWarnings: [String] = []
    XCTAssertEqual(TraceConfiguration.frames(from: [:]), 32)
    XCTAssertEqual(TraceConfiguration.frames(from: ["DEALLOCTRACE_FRAMES": " 7 "]), 7)
    XCTAssertEqual(
      TraceConfiguration.frames(
        from: ["DEALLOCTRACE_FRAMES": "-1"], warn: { framesWarnings.append($0.description) }), 32)
    XCTAssertEqual(framesWarnings, ["dealloctrace: DEALLOCTRACE_FRAMES=-1 is not a number ≥ 0"])
  }

  func testTheSessionStatesTheSharedQueuesDelay() throws {
    let log = directory.appendingPathComponent("delay.jsonl")
    let run = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let stated = try XCTUnwrap(
      ParsedLog(contentsOf: log).kind("session").first?["delay_ms"] as? Int)
    XCTAssertEqual(Duration.milliseconds(stated), DeallocQueue.shared.delay)
    XCTAssertEqual(Duration.milliseconds(stated), QueueTracing.sharedQueueDelay)
  }

  func testDeallocTraceOneWritesIntoTheWorkingDirectory() throws {
    let run = try ProbeRun.run(environment: ["DEALLOCTRACE": "1"], directory: directory)
    XCTAssertEqual(run.status, 0, run.standardError)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    XCTAssertEqual(files.count, 1)
    let name = try XCTUnwrap(files.first)
    XCTAssertNotNil(name.range(of: #"^dealloctrace\.\d+\.jsonl$"#, options: .regularExpression))
    let log = try ParsedLog(contentsOf: directory.appendingPathComponent(name))
    let pid = try XCTUnwrap(log.kind("session").first?["pid"] as? Int)
    XCTAssertEqual(name, "dealloctrace.\(pid).jsonl")
  }

  func testADirectoryAndPercentPAreExpanded() throws {
    let inDirectory = try ProbeRun.run(environment: ["DEALLOCTRACE_LOG": directory.path])
    XCTAssertEqual(inDirectory.status, 0, inDirectory.standardError)
    let withPid = try ProbeRun.run(
      environment: ["DEALLOCTRACE_LOG": directory.appendingPathComponent("run-%p.log").path])
    XCTAssertEqual(withPid.status, 0, withPid.standardError)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    XCTAssertEqual(files.count, 2, "\(files)")
    XCTAssertNotNil(files[0].range(of: #"^dealloctrace\.\d+\.jsonl$"#, options: .regularExpression))
    XCTAssertNotNil(files[1].range(of: #"^run-\d+\.log$"#, options: .regularExpression))
    for file in files {
      let log = try ParsedLog(contentsOf: directory.appendingPathComponent(file))
      let pid = try XCTUnwrap(log.kind("session").first?["pid"] as? Int)
      XCTAssertTrue(file.contains(String(pid)))
      let mode = try FileManager.default.attributesOfItem(
        atPath: directory.appendingPathComponent(file).path)[.posixPermissions]
      XCTAssertEqual(mode as? Int, 0o600)
    }
  }

  func testZeroFramesTurnsBacktracesOff() throws {
    let log = directory.appendingPathComponent("noframes.jsonl")
    let run = try ProbeRun.run(
      environment: ["DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_FRAMES": "0"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("session").first?["frames"] as? Int, 0)
    XCTAssertTrue(parsed.kind("stack").isEmpty)
    XCTAssertEqual(parsed.kind("enqueue").count, 5)
    XCTAssertTrue(parsed.kind("enqueue").allSatisfy { $0["stack"] == nil })
  }

  func testStartFromCodeTakesTheFramesVariableUnlessGivenADepth() throws {
    let log = directory.appendingPathComponent("explicit-frames.jsonl")
    // The probe's `explicit` mode calls `start(path:)`, then `start(path:frames: 4)`.
    let run = try ProbeRun.run(["explicit", log.path], environment: ["DEALLOCTRACE_FRAMES": "5"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let parsed = try ParsedLog(contentsOf: log)
    XCTAssertEqual(parsed.kind("session").map { $0["frames"] as? Int }, [5, 4])
    let firstSessionStacks = parsed.records.prefix { $0["ev"] as? String != "end" }
      .filter { $0["ev"] as? String == "stack" }
    XCTAssertFalse(firstSessionStacks.isEmpty)
    for stack in firstSessionStacks {
      XCTAssertLessThanOrEqual((stack["frames"] as? [Any])?.count ?? 99, 5, "\(stack)")
    }
  }

  func testStartFromCodeWithoutTheVariableUsesTheDefaultDepth() throws {
    let log = directory.appendingPathComponent("explicit-default.jsonl")
    let run = try ProbeRun.run(["explicit", log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(
      try ParsedLog(contentsOf: log).kind("session").map { $0["frames"] as? Int }, [32, 4])
  }

  func testABadMaxSizeWarnsOnceSayingWhichCapApplies() throws {
    let log = directory.appendingPathComponent("badmaxsize.jsonl")
    let run = try ProbeRun.run(
      environment: ["DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_MAX_SIZE": "lots"])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertEqual(
      run.errorLines,
      [
        "dealloctrace: DEALLOCTRACE_MAX_SIZE=lots is not a size (bytes, or with a unit: 500MB, 1GiB;"
          + " 0 or unlimited for none); the default cap, 1 GiB (1073741824 bytes), applies"
      ])
    XCTAssertEqual(try ParsedLog(contentsOf: log).kind("session").count, 1)
  }

  func testABadFramesValueWarnsOnceAndUsesTheDefault() throws {
    let log = directory.appendingPathComponent("badframes.jsonl")
    let run = try ProbeRun.run(
      environment: ["DEALLOCTRACE_LOG": log.path, "DEALLOCTRACE_FRAMES": "lots"])
    XCTAssertEqual(run.status, 0)
    XCTAssertEqual(run.errorLines, ["dealloctrace: DEALLOCTRACE_FRAMES=lots is not a number ≥ 0"])
    XCTAssertEqual(try ParsedLog(contentsOf: log).kind("session").first?["frames"] as? Int, 32)
  }
}
