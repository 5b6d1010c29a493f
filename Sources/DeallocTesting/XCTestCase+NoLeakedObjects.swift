import DeallocLog
import DeallocQueue
import DeallocTrace
import XCTest

/// The program's leak findings a census found at one moment: each finding id with how many
/// groups of its shape there were. What `assertNoLeakedObjects(since:)` compares with.
public struct LeakCensusMark: Sendable, Equatable {
  /// Finding id → groups of that shape.
  public var instances: [String: Int]
  /// Why the census could not run, if it could not.
  public var error: String?
}

/// Whole-process leak censuses for tests: no object the test leaked is unreachable at its
/// end, once the queues drained. Needs the registry from the process's start
/// (`DEALLOCTRACE_LEAKS=1`, or `DEALLOCTRACE_HOLDERS=1`).
public enum LeakCensus {
  /// Drains every queue, waits for drains under way (at most `drainWait` each), and takes a
  /// census: objects that only waited in a queue are then freed, not counted.
  public static func take(label: String, drainWait: Duration = .seconds(1)) -> CensusRecord? {
    for queue in DeallocQueue.liveQueues {
      if queue.isDrainingOnCallingThread { continue }
      queue.drain()
      queue.waitForDrainsInFlight(timeout: drainWait)
    }
    guard let members = DeallocTrace.censusMembers(label: label) else { return nil }
    return CensusRecord.parse(members: members)
  }

  /// The program's findings of `census`, by id.
  static func mark(_ census: CensusRecord?) -> LeakCensusMark {
    var instances: [String: Int] = [:]
    for group in census?.programGroups ?? [] { instances[group.id, default: 0] += group.instances }
    return LeakCensusMark(instances: instances, error: census?.error)
  }

  /// The findings of `census` that `mark` did not have (or had fewer groups of).
  static func newGroups(_ census: CensusRecord, since mark: LeakCensusMark?) -> [CensusGroup] {
    census.programGroups.filter { group in
      group.instances > (mark?.instances[group.id] ?? 0)
    }
  }
}

extension XCTestCase {
  /// A census now, to compare with at the test's end (`assertNoLeakedObjects(since:)`).
  public func markLeakCensus() -> LeakCensusMark {
    LeakCensus.mark(LeakCensus.take(label: "\(name) start"))
  }

  /// Fails when the process now holds leaked objects (ROOT CYCLE or ROOT LEAK groups of the
  /// program's types; the libraries' own leaks never count) that the census at `mark` did
  /// not: the failure prints each new group's tree as `leaks` does. The queues are drained
  /// first, so a delayed dealloc is never a leak.
  ///
  /// The trade-off: the census sees the whole process, so a leak another test made while
  /// this one ran (parallel XCTest processes are separate, but threads this test did not
  /// start are not) counts here too; `mark` taken at the test's start keeps earlier leaks out.
  public func assertNoLeakedObjects(
    since mark: LeakCensusMark? = nil, file: StaticString = #filePath, line: UInt = #line
  ) {
    guard let census = LeakCensus.take(label: "\(name) end") else {
      XCTFail("the leak census could not run: out of memory", file: file, line: line)
      return
    }
    if let error = census.error {
      XCTFail("the leak census could not run: \(error)", file: file, line: line)
      return
    }
    let groups = LeakCensus.newGroups(census, since: mark)
    guard !groups.isEmpty else { return }
    let objects = groups.reduce(0) { $0 + $1.count }
    let lines =
      ["\(objects) leaked \(objects == 1 ? "object" : "objects") in the whole process:"]
      + groups.flatMap(CensusTreeText.lines)
    XCTFail(lines.joined(separator: "\n"), file: file, line: line)
  }
}
