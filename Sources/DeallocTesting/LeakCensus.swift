import DeallocLog
import DeallocQueue
import DeallocTrace

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
    drainQueues(wait: drainWait)
    return takeWithoutDraining(label: label)
  }

  /// A census as the process stands: objects waiting in a queue are delayed, not leaked.
  /// What a test's start takes, so that it does not release other tests' queued objects.
  static func takeWithoutDraining(label: String) -> CensusRecord? {
    guard let members = DeallocTrace.censusMembers(label: label) else { return nil }
    return CensusRecord.parse(members: members)
  }

  /// Drains every queue but the one this thread is draining, and waits for drains under way
  /// on other threads (at most `wait` each).
  static func drainQueues(wait: Duration) {
    for queue in DeallocQueue.liveQueues {
      if queue.isDrainingOnCallingThread { continue }
      queue.drain()
      queue.waitForDrainsInFlight(timeout: wait)
    }
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

  /// The findings of `groups` that `again`, a later census, still has more of than `mark`:
  /// an object one census finds unreachable and the next does not was only in flight (held
  /// for a moment by a register of a thread the census could not stop).
  static func confirmed(
    _ groups: [CensusGroup], by again: CensusRecord, since mark: LeakCensusMark?
  ) -> [CensusGroup] {
    let still = Set(newGroups(again, since: mark).map(\.id))
    return groups.filter { still.contains($0.id) }
  }

  /// A failure's lines for `groups`: a count, then each group's tree as `leaks` prints it.
  static func failureLines(_ groups: [CensusGroup]) -> [String] {
    let objects = groups.reduce(0) { $0 + $1.count }
    return ["\(objects) leaked \(objects == 1 ? "object" : "objects") in the whole process:"]
      + groups.flatMap { CensusTreeText.lines($0) }
  }
}
