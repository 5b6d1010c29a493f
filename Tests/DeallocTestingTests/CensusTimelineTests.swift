import DeallocLog
import Synchronization
import Testing

@testable import DeallocTesting

/// The blame of `.leakTracking(.allObjects)` under parallel tests, over scripted censuses:
/// each `begin` and `end` takes the next one (and an `end` that finds a leak one more, to
/// confirm it), so the order of the calls is the timeline.
@Suite struct CensusTimelineTests {
  /// Censuses handed out in order; each is the program's findings by id (one group each).
  final class Script: Sendable {
    let censuses: Mutex<[[String: Int]]>
    let drained = Mutex<[Bool]>([])

    init(_ censuses: [[String: Int]]) { self.censuses = Mutex(censuses) }

    func timeline() -> CensusTimeline {
      CensusTimeline { label, drains in
        self.drained.withLock { $0.append(drains) }
        let next = self.censuses.withLock { $0.isEmpty ? [:] : $0.removeFirst() }
        var record = CensusRecord(time: 0, label: label)
        record.groups = next.sorted { $0.key < $1.key }.map { id, instances in
          CensusGroup(
            id: id, kind: .cycle, instances: instances, count: 2 * instances,
            bytes: 48 * instances, library: false, members: [], edges: [], tree: [])
        }
        return record
      }
    }
  }

  private func ticket(_ start: CensusTimeline.Start) throws -> CensusTimeline.Ticket {
    guard case .started(let ticket) = start else {
      Issue.record("the census did not start: \(start)")
      throw CancellationError()
    }
    return ticket
  }

  private func leaks(_ verdict: CensusTimeline.Verdict) -> [String: [String]] {
    guard case .leaked(let leaks) = verdict else { return ["unavailable": []] }
    return Dictionary(uniqueKeysWithValues: leaks.map { ($0.group.id, $0.alsoRunning) })
  }

  @Test func aTestThatRanAloneIsBlamedAlone() throws {
    let timeline = Script([[:], ["x": 1], ["x": 1]]).timeline()
    let alone = try ticket(timeline.begin("alone"))
    #expect(leaks(timeline.end(alone)) == ["x": []])
  }

  /// A starts, B starts, X appears, B ends, Y appears, A ends: X is both tests', each told
  /// of the other; Y appeared after B ended, so it is A's alone.
  @Test func aLeakWhileAnotherTestRanNamesItAndOneAfterItEndedDoesNot() throws {
    let x = ["old": 1, "x": 1]
    let xy = ["old": 1, "x": 1, "y": 1]
    let script = Script([["old": 1], ["old": 1], x, x, xy, xy])
    let timeline = script.timeline()
    let a = try ticket(timeline.begin("A"))
    let b = try ticket(timeline.begin("B"))
    #expect(leaks(timeline.end(b)) == ["x": ["A"]])
    #expect(leaks(timeline.end(a)) == ["x": ["B"], "y": []])
    // Only the ends drain the queues: a start leaves other tests' queued objects alone.
    #expect(script.drained.withLock { $0 } == [false, false, true, false, true, false])
  }

  /// A leak that was there before a test started is not that test's, and a second group of
  /// an old shape is.
  @Test func groupsAreCountedFromTheTestsStart() throws {
    let timeline = Script([["x": 1], ["x": 2], ["x": 2]]).timeline()
    let test = try ticket(timeline.begin("T"))
    guard case .leaked(let found) = timeline.end(test) else {
      Issue.record("no verdict")
      return
    }
    #expect(found.map(\.newInstances) == [1])
  }

  /// Tests that start and end one after the other are never blamed on each other, however
  /// many ran before (the timeline forgets the censuses no running test needs).
  @Test func serialTestsAreBlamedExactlyAndTheTimelineForgets() throws {
    var censuses: [[String: Int]] = []
    for index in 0..<50 {
      let before = Dictionary(uniqueKeysWithValues: (0..<index).map { ("leak\($0)", 1) })
      let after = before.merging(["leak\(index)": 1]) { $1 }
      censuses += [before, after, after]
    }
    let timeline = Script(censuses).timeline()
    for index in 0..<50 {
      let test = try ticket(timeline.begin("T\(index)"))
      #expect(leaks(timeline.end(test)) == ["leak\(index)": []])
    }
    #expect(timeline.pointsKept == 1)
  }

  /// An object unreachable in one census and reachable in the next was in flight (held by a
  /// register of a thread the census could not stop): not reported. One still unreachable is.
  @Test func aFindingTheSecondCensusNoLongerHasIsNotReported() throws {
    let timeline = Script([[:], ["x": 1, "inFlight": 1], ["x": 1]]).timeline()
    let test = try ticket(timeline.begin("T"))
    #expect(leaks(timeline.end(test)) == ["x": []])
  }

  @Test func casesOfAParameterisedTestAreNumbered() throws {
    let timeline = Script([[:], [:], ["x": 1], ["x": 1], [:]]).timeline()
    let first = try ticket(timeline.begin("P(_:)", isCase: true))
    let second = try ticket(timeline.begin("P(_:)", isCase: true))
    #expect(leaks(timeline.end(first)) == ["x": ["P(_:) [case 2]"]])
    _ = timeline.end(second)
  }

  @Test func withoutACensusTheFirstTestIsToldAndNoOtherIs() {
    let timeline = CensusTimeline { label, _ in
      var record = CensusRecord(time: 0, label: label)
      record.error = "the live-object registry is not on"
      return record
    }
    let firsts = (0..<3).map { _ -> Bool? in
      guard case .unavailable(let reason, let firstTime) = timeline.begin("T") else { return nil }
      #expect(reason == "the live-object registry is not on")
      return firstTime
    }
    #expect(firsts == [true, false, false])
  }
}

/// The XCTest form's confirmation: a finding the second census no longer has is dropped.
@Suite struct LeakCensusConfirmationTests {
  private func census(_ instances: [String: Int]) -> CensusRecord {
    var record = CensusRecord(time: 0, label: "t")
    record.groups = instances.sorted { $0.key < $1.key }.map { id, count in
      CensusGroup(
        id: id, kind: .cycle, instances: count, count: 2 * count, bytes: 48 * count,
        library: false, members: [], edges: [], tree: [])
    }
    return record
  }

  @Test func onlyWhatTheSecondCensusStillHasIsALeak() {
    let mark = LeakCensus.mark(census(["old": 1]))
    let first = LeakCensus.newGroups(census(["old": 1, "x": 1, "inFlight": 1]), since: mark)
    let kept = LeakCensus.confirmed(first, by: census(["old": 1, "x": 1]), since: mark)
    #expect(first.map(\.id).sorted() == ["inFlight", "x"])
    #expect(kept.map(\.id) == ["x"])
  }
}
