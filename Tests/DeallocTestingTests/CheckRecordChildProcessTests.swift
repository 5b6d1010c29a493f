import Foundation
import XCTest

/// Runs the leak samples in child processes with `DEALLOCTRACE_LOG` set and reads the
/// `check` records their leak assertions wrote: what `dealloctrace report` explains later.
final class CheckRecordChildProcessTests: XCTestCase {
  private var directory: URL!

  override func setUpWithError() throws {
    try XCTSkipIf(samplesEnabled, "this process is itself a sample run")
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("DeallocTestingTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    if let directory {
      try? FileManager.default.removeItem(at: directory)
    }
  }

  func testDelayedDeallocIsCheckedAliveInItsQueueThenGone() throws {
    let (run, log) = try runTraced("testDelayedDeallocPasses")

    XCTAssertEqual(run.status, 0, run.output)
    let checks = log.checks(label: "XCTestLeakSamples.testDelayedDeallocPasses")
    XCTAssertEqual(checks.map(\.alive), [true, false], "\(checks)")
    let enqueue = try XCTUnwrap(log.records.first { $0["ev"] as? String == "enqueue" })
    XCTAssertEqual(enqueue["q"] as? String, "samples")
    XCTAssertEqual(enqueue["type"] as? String, "DeallocTestingTests.Node")
    for check in checks {
      XCTAssertEqual(check.id, enqueue["id"] as? Int, "the queue told the check the object's id")
      XCTAssertEqual(check.obj, enqueue["obj"] as? String)
      XCTAssertEqual(check.type, "DeallocTestingTests.Node")
    }
    XCTAssertTrue(log.checkPrecedesRelease(of: try XCTUnwrap(checks.first?.id)))
  }

  func testPlainLeakIsOneAliveCheckWithoutAnID() throws {
    let (run, log) = try runTraced("testRetainCycleFails")

    XCTAssertEqual(run.status, 1, run.output)
    let checks = log.checks(label: "XCTestLeakSamples.testRetainCycleFails")
    XCTAssertEqual(checks.map(\.alive), [true], "\(checks)")
    XCTAssertNil(checks.first?.id, "no queue ever held it")
    XCTAssertTrue(
      run.output.contains("enqueue stack: no queue held it at the end of the test"), run.output)
  }

  func testSurvivorIsCheckedAliveInItsQueueAndAliveAfterItsRelease() throws {
    let (run, log) = try runTraced("testCachedScreenHandedToQueueFails")

    XCTAssertEqual(run.status, 1, run.output)
    let checks = log.checks(label: "XCTestLeakSamples.testCachedScreenHandedToQueueFails")
    XCTAssertEqual(checks.map(\.alive), [true, true], "\(checks)")
    let id = try XCTUnwrap(checks.first?.id)
    XCTAssertEqual(checks.last?.id, id)
    let release = try XCTUnwrap(
      log.records.first { $0["ev"] as? String == "release" && $0["id"] as? Int == id })
    XCTAssertEqual(release["freed"] as? Bool, false)
    XCTAssertTrue(
      run.output.contains("enqueue stack: object id \(id) in the trace log"), run.output)
    // The frames themselves, read back from the log: the sample's own function enqueued it.
    XCTAssertTrue(
      run.output.contains(
        "\n    DeallocTestingTests.XCTestLeakSamples.testCachedScreenHandedToQueueFails() -> ()"),
      run.output)
  }

  private func runTraced(_ test: String) throws -> (ChildTestRun, TraceLog) {
    let path = directory.appendingPathComponent("\(test).jsonl").path
    let run = try ChildTestRun.run(
      .xctest, filter: "DeallocTestingTests.XCTestLeakSamples/\(test)",
      environment: ["DEALLOCTRACE_LOG": path])
    return (run, try TraceLog(path: path))
  }
}

/// The records of a trace log, parsed line by line.
private struct TraceLog {
  struct Check: CustomStringConvertible {
    var alive: Bool
    var id: Int?
    var obj: String?
    var type: String?
    var description: String { "check(alive: \(alive), id: \(id.map(String.init) ?? "-"))" }
  }

  var records: [[String: Any]]

  init(path: String) throws {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    records = try text.split(separator: "\n").map { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
      return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(line)")
    }
  }

  func checks(label: String) -> [Check] {
    records.filter { $0["ev"] as? String == "check" && $0["label"] as? String == label }.map {
      Check(
        alive: $0["alive"] as? Bool ?? false, id: $0["id"] as? Int, obj: $0["obj"] as? String,
        type: $0["type"] as? String)
    }
  }

  /// Whether the first check naming `id` comes before the queue's release of `id`.
  func checkPrecedesRelease(of id: Int) -> Bool {
    let check = records.firstIndex { $0["ev"] as? String == "check" && $0["id"] as? Int == id }
    let release = records.firstIndex {
      $0["ev"] as? String == "release" && $0["id"] as? Int == id
    }
    guard let check, let release else { return false }
    return check < release
  }
}
