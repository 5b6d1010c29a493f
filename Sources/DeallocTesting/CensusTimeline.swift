import DeallocHooks
import DeallocLog

/// Who could have made each leak a census finds, when tests run in parallel.
///
/// A census sees the whole process, not one test, and the registry does not know which
/// test allocated an object. So each test under `.leakTracking(.allObjects)` takes a census
/// as it starts and another as it ends, and every census lands on one timeline with the
/// tests that were running since the one before. A finding whose count rose only between
/// censuses while the test ran alone is that test's for certain; one that rose while other
/// tests ran too could be any of theirs, and each of them is told so, with the others named.
/// A finding is reported only when a second census at the test's end still has it.
///
/// The trade-off: censuses are taken one at a time under a lock (a few milliseconds each
/// for a test process's heap), and tests without the trait are not on the timeline, so a
/// leak one of them makes is blamed on the traced tests running then.
final class CensusTimeline: Sendable {
  /// The process's timeline, over the recorder's census.
  static let shared = CensusTimeline(census: { label, drains in
    drains
      ? LeakCensus.take(label: label, drainWait: .seconds(1))
      : LeakCensus.takeWithoutDraining(label: label)
  })

  /// One test (or one case of a parameterised test) on the timeline.
  struct Participant: Hashable, Sendable {
    let serial: Int
    let name: String
  }

  /// A test that started: who it is and the index of its start census.
  struct Ticket: Sendable {
    let participant: Participant
    let start: Int
  }

  /// A finding that appeared while a test ran.
  struct Leak: Sendable, Equatable {
    var group: CensusGroup
    /// Groups of its shape that appeared.
    var newInstances: Int
    /// The other tests that ran while it appeared, sorted; empty when the test ran alone.
    var alsoRunning: [String]
  }

  enum Start: Sendable {
    case started(Ticket)
    /// The census cannot run; `firstTime` is true for the first test told so.
    case unavailable(reason: String, firstTime: Bool)
  }

  enum Verdict: Sendable, Equatable {
    case leaked([Leak])
    case unavailable(reason: String)
  }

  /// One census on the timeline.
  fileprivate struct Point {
    /// The program's findings by id: how many groups of each shape.
    var instances: [String: Int]
    var groups: [String: CensusGroup]
    /// The tests that were running at any time since the previous census.
    var ranSince: Set<Participant>
  }

  fileprivate struct State {
    /// The tests running now, with the index of their start census.
    var running: [Participant: Int] = [:]
    /// The censuses some running test still needs; `points[0]` has index `firstIndex`.
    var points: [Point] = []
    var firstIndex = 0
    var nextSerial = 0
    var toldUnavailable = false
    var casesStarted: [String: Int] = [:]
  }

  private let state = AnnotatedMutex(State())
  /// Takes a census labelled with its first argument, draining the queues first when the
  /// second is true; nil when out of memory.
  private let census: @Sendable (String, Bool) -> CensusRecord?

  init(census: @escaping @Sendable (String, Bool) -> CensusRecord?) {
    self.census = census
  }

  /// How many censuses the timeline keeps now (for tests: it forgets what no test needs).
  var pointsKept: Int { state.withLock { $0.points.count } }

  /// Takes the start census of the test `name` and puts it on the timeline. Its queues are
  /// not drained: another test's queued objects are no business of this one's start.
  /// `isCase`: one case of a parameterised test, named `name [case N]` in the order the
  /// cases start (Swift Testing does not show a case's arguments).
  func begin(_ name: String, isCase: Bool = false) -> Start {
    state.withLock { state in
      var name = name
      if isCase {
        state.casesStarted[name, default: 0] += 1
        name += " [case \(state.casesStarted[name] ?? 0)]"
      }
      let record = census("\(name) start", false)
      guard let record, record.error == nil else {
        defer { state.toldUnavailable = true }
        return .unavailable(
          reason: record?.error ?? "out of memory", firstTime: !state.toldUnavailable)
      }
      state.nextSerial += 1
      let participant = Participant(serial: state.nextSerial, name: name)
      let index = state.append(Point(record, ranSince: Set(state.running.keys)))
      state.running[participant] = index
      return .started(Ticket(participant: participant, start: index))
    }
  }

  /// Drains the queues, takes the end census of `ticket`'s test and returns the findings
  /// that appeared since its start, each with the other tests that ran meanwhile.
  func end(_ ticket: Ticket) -> Verdict {
    state.withLock { state in
      defer {
        state.running[ticket.participant] = nil
        state.forgetPointsNoOneNeeds()
      }
      guard let record = census("\(ticket.participant.name) end", true) else {
        return .unavailable(reason: "out of memory")
      }
      if let error = record.error { return .unavailable(reason: error) }
      let end = state.append(Point(record, ranSince: Set(state.running.keys)))
      let found = state.leaks(of: ticket.participant, from: ticket.start, to: end)
      guard !found.isEmpty else { return .leaked([]) }
      // A leak stays unreachable. An object one census finds unreachable and the next one
      // does not was only in flight: held for a moment by a register of a thread the census
      // could not stop. So a second census confirms the first's findings.
      guard let again = census("\(ticket.participant.name) end, again", false),
        again.error == nil
      else { return .leaked(found) }
      let confirmation = state.append(Point(again, ranSince: Set(state.running.keys)))
      let foundIDs = Set(found.map(\.group.id))
      return .leaked(
        state.leaks(of: ticket.participant, from: ticket.start, to: confirmation).filter {
          foundIDs.contains($0.group.id)
        })
    }
  }
}

extension CensusTimeline.Point {
  fileprivate init(_ record: CensusRecord, ranSince: Set<CensusTimeline.Participant>) {
    var instances: [String: Int] = [:]
    var groups: [String: CensusGroup] = [:]
    for group in record.programGroups {
      instances[group.id, default: 0] += group.instances
      groups[group.id] = groups[group.id] ?? group
    }
    self.init(instances: instances, groups: groups, ranSince: ranSince)
  }
}

extension CensusTimeline.State {
  /// Appends `point` and returns its index.
  fileprivate mutating func append(_ point: CensusTimeline.Point) -> Int {
    points.append(point)
    return firstIndex + points.count - 1
  }

  /// The findings with more groups at `end` than at `start`; for each, the tests that ran
  /// between two censuses whose count of it rose, `participant` left out.
  fileprivate func leaks(
    of participant: CensusTimeline.Participant, from start: Int, to end: Int
  ) -> [CensusTimeline.Leak] {
    let first = points[start - firstIndex]
    let last = points[end - firstIndex]
    return last.groups.values.compactMap { group -> CensusTimeline.Leak? in
      let added = (last.instances[group.id] ?? 0) - (first.instances[group.id] ?? 0)
      guard added > 0 else { return nil }
      var suspects: Set<CensusTimeline.Participant> = []
      for index in (start + 1)...end {
        let before = points[index - 1 - firstIndex].instances[group.id] ?? 0
        let after = points[index - firstIndex].instances[group.id] ?? 0
        if after > before { suspects.formUnion(points[index - firstIndex].ranSince) }
      }
      suspects.remove(participant)
      return CensusTimeline.Leak(
        group: group, newInstances: added, alsoRunning: suspects.map(\.name).sorted())
    }
    .sorted { ($0.group.count, $0.group.id) > ($1.group.count, $1.group.id) }
  }

  /// Drops the censuses older than every running test's start (the last one stays: the
  /// next census is compared with it).
  fileprivate mutating func forgetPointsNoOneNeeds() {
    let oldestNeeded = running.values.min() ?? (firstIndex + points.count - 1)
    let drop = max(0, min(points.count - 1, oldestNeeded - firstIndex))
    points.removeFirst(drop)
    firstIndex += drop
  }
}
