import Foundation
import TestSupport
import XCTest

/// Runs the leak and queue samples in child processes with `DEALLOCTRACE_LOG` set and reads
/// the `check` records their leak assertions wrote (what `dealloctrace report` explains
/// later) and the `drain` records of their queues.
final class CheckRecordChildProcessTests: XCTestCase {
  private var directory: ScratchDirectory?

  override func setUpWithError() throws {
    try XCTSkipIf(samplesEnabled, "this process is itself a sample run")
    directory = try ScratchDirectory("check-records")
  }

  override func tearDownWithError() throws {
    directory?.remove()
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

  func testSurvivorOfItsQueuesOwnTimerFailsWithItsStateAndEnqueueStack() throws {
    let test = "testCachedScreenReleasedByItsQueuesTimerFails"
    let (run, log) = try runTraced(test)

    XCTAssertEqual(run.status, 1, run.output)
    let enqueue = try XCTUnwrap(log.records.first { $0["ev"] as? String == "enqueue" })
    XCTAssertEqual(enqueue["q"] as? String, "fast-samples")
    let id = try XCTUnwrap(enqueue["id"] as? Int)
    let address = try XCTUnwrap(enqueue["obj"] as? String)
    let drain = try XCTUnwrap(log.records.first { $0["ev"] as? String == "drain" })
    XCTAssertEqual(drain["why"] as? String, "timer", "the queue's own timer released it")
    // The one check, after the timer's release: alive, and named by the tracer's id.
    let checks = log.checks(label: "XCTestLeakSamples.\(test)")
    XCTAssertEqual(checks.map(\.alive), [true], "\(checks)")
    XCTAssertEqual(checks.first?.id, id)
    // The message: type, address, state, and the function that enqueued it.
    XCTAssertTrue(
      run.output.contains(
        "leak: DeallocTestingTests.Node at \(address) is still alive at the end of "
          + "XCTestLeakSamples.\(test)"),
      run.output)
    XCTAssertTrue(
      run.output.contains(
        "state: survived its release by DeallocQueue \"fast-samples\": the queue let it go "
          + "before the leak check looked, and 1 other strong reference holds it"),
      run.output)
    XCTAssertTrue(
      run.output.contains("enqueue stack: object id \(id) in the trace log"), run.output)
    XCTAssertTrue(
      run.output.contains("\n    DeallocTestingTests.XCTestLeakSamples.\(test)() -> ()"),
      run.output)
  }

  func testDrainCountsOnlyTheEntriesThatHaveEnqueueRecords() throws {
    let (run, log) = try runTraced("testDrainOfAPartlyTracedBatch", in: "TracedQueueSamples")
    XCTAssertEqual(run.status, 0, run.output)

    let ours = log.records.filter { $0["q"] as? String == "partly-traced" }
    let enqueues = ours.filter { $0["ev"] as? String == "enqueue" }
    let drains = ours.filter { $0["ev"] as? String == "drain" }
    XCTAssertEqual(enqueues.count, 2, "two of the five entries were traced")
    XCTAssertEqual(drains.count, 1, "\(drains)")
    XCTAssertEqual(drains.first?["n"] as? Int, 2, "n counts the traced entries, not all five")
    XCTAssertEqual(drains.first?["why"] as? String, "explicit")
    let released = Set(
      log.records.filter { $0["ev"] as? String == "release" }.compactMap { $0["id"] as? Int })
    XCTAssertEqual(released, Set(enqueues.compactMap { $0["id"] as? Int }))
  }

  private func runTraced(
    _ test: String, in samples: String = "XCTestLeakSamples"
  ) throws -> (ChildTestRun, ParsedLog) {
    let path = try XCTUnwrap(directory).file("\(test).jsonl")
    let run = try ChildTestRun.run(
      .xctest, filter: "DeallocTestingTests.\(samples)/\(test)",
      environment: ["DEALLOCTRACE_LOG": path])
    let log = try ParsedLog(path: path)
    XCTAssertFalse(log.truncatedTail, "the child's log ends with a complete line")
    return (run, log)
  }
}
