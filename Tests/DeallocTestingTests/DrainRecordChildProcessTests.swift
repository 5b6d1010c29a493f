import Foundation
import XCTest

/// Runs the traced queue samples in child processes and reads the `drain` records.
final class DrainRecordChildProcessTests: XCTestCase {
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

  func testDrainCountsOnlyTheEntriesThatHaveEnqueueRecords() throws {
    let path = directory.appendingPathComponent("drain.jsonl").path
    let run = try ChildTestRun.run(
      .xctest, filter: "DeallocTestingTests.TracedQueueSamples/testDrainOfAPartlyTracedBatch",
      environment: ["DEALLOCTRACE_LOG": path])
    XCTAssertEqual(run.status, 0, run.output)
    let log = try TraceLog(path: path)

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
}
