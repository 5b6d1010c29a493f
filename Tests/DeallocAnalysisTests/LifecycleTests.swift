import DeallocLog
import Foundation
import Testing

@testable import DeallocAnalysis

/// The object life-cycle model: the state an object ends its session in, the release facts
/// and the state they settle, survivors by address, and counts that are the source of both
/// the summary and the per-type rows.
@Suite struct LifecycleTests {
  @Test func anOpenObjectsStateFollowsHowTheSessionEnded() {
    let open = EndOfSession(lastTime: 1_000, ended: false, stuckAfter: 100)
    #expect(open.state(ofOpenObjectEnqueuedAt: 900, released: false) == .pending)
    #expect(open.state(ofOpenObjectEnqueuedAt: 899, released: false) == .stuck)
    #expect(open.state(ofOpenObjectEnqueuedAt: 0, released: true) == .leaked)
    let ended = EndOfSession(lastTime: 1_000, ended: true, stuckAfter: 100)
    #expect(ended.state(ofOpenObjectEnqueuedAt: 999, released: false) == .neverReleased)
    #expect(ended.state(ofOpenObjectEnqueuedAt: 0, released: true) == .leaked)
  }

  @Test func aReleaseFreesTheObjectOrLeavesASurvivor() {
    #expect(ObjectLifecycle.release(freed: true) == .freed)
    #expect(ObjectLifecycle.release(freed: true).settledState == .freed)
    #expect(ObjectLifecycle.release(freed: false) == .survivor)
    #expect(ObjectLifecycle.release(freed: false).settledState == nil)
    var survivor = ObjectLifecycle(enqueuedAt: 10)
    #expect(!survivor.isSurvivor)
    survivor.recordRelease(at: 20, freed: false, retainCount: 1)
    #expect(survivor.isSurvivor)
    var freed = ObjectLifecycle(enqueuedAt: 10)
    freed.recordRelease(at: 20, freed: true, retainCount: nil)
    #expect(!freed.isSurvivor)
  }

  @Test func theDeallocOfASurvivorMakesItLate() {
    #expect(ObjectLifecycle.stateAfterDealloc == .late)
    var survivor = ObjectLifecycle(enqueuedAt: 10)
    survivor.recordRelease(at: 20, freed: false, retainCount: 1)
    survivor.recordDealloc(at: 30)
    #expect(!survivor.isSurvivor && survivor.settledState == .late)
    // However the session ends: late is final.
    for ended in [false, true] {
      let end = EndOfSession(lastTime: 1_000, ended: ended, stuckAfter: 100)
      #expect(survivor.state(at: end) == .late)
    }
  }

  @Test func theEndMakesASurvivorLeakedAndAQueuedObjectStuckPendingOrNeverReleased() {
    var survivor = ObjectLifecycle(enqueuedAt: 0)
    survivor.recordRelease(at: 5, freed: false, retainCount: 2)
    let open = EndOfSession(lastTime: 1_000, ended: false, stuckAfter: 100)
    let ended = EndOfSession(lastTime: 1_000, ended: true, stuckAfter: 100)
    #expect(survivor.state(at: open) == .leaked && survivor.state(at: ended) == .leaked)
    #expect(ObjectLifecycle(enqueuedAt: 899).state(at: open) == .stuck)
    #expect(ObjectLifecycle(enqueuedAt: 900).state(at: open) == .pending)
    #expect(ObjectLifecycle(enqueuedAt: 899).state(at: ended) == .neverReleased)
  }

  /// A check of an object waiting in its queue is a false leak when the release freed it (or
  /// is not read yet), a true leak when the release left it alive; a check outside the
  /// object's time in its queue, or of no object, is a true leak.
  @Test func aCheckIsAFalseLeakOnlyOfAWaitingObjectItsReleaseFreed() {
    func verdict(_ t: Int64, releasedAt: Int64?, freed: Bool?) -> CheckVerdict.Verdict {
      var object = ObjectLifecycle(enqueuedAt: 10)
      if let releasedAt, let freed {
        object.recordRelease(at: releasedAt, freed: freed, retainCount: nil)
      }
      let rule = ObjectLifecycle.isDelayedDealloc(
        checkAt: t, enqueuedAt: 10, releasedAt: releasedAt, freedByRelease: freed)
      #expect(ObjectLifecycle.verdict(delayedDealloc: rule) == object.verdict(ofCheckAt: t))
      return ObjectLifecycle.verdict(ofCheckAt: t, of: object)
    }
    #expect(verdict(15, releasedAt: 20, freed: true) == .falseLeak)
    #expect(verdict(10, releasedAt: 20, freed: true) == .falseLeak)
    #expect(verdict(15, releasedAt: nil, freed: nil) == .falseLeak)
    #expect(verdict(15, releasedAt: 20, freed: false) == .trueLeak)
    #expect(verdict(20, releasedAt: 20, freed: true) == .trueLeak)
    #expect(verdict(9, releasedAt: nil, freed: nil) == .trueLeak)
    #expect(ObjectLifecycle.verdict(ofCheckAt: 15, of: nil) == .trueLeak)
  }

  @Test func releaseFactsSettleFreedAndLateAndLeaveTheRestOpen() {
    let end = EndOfSession(lastTime: 1_000, ended: true, stuckAfter: 100)
    var freed = ObjectLifecycle(enqueuedAt: 10)
    freed.recordRelease(at: 20, freed: true, retainCount: nil)
    #expect(freed.settledState == .freed)
    var survivor = ObjectLifecycle(enqueuedAt: 10)
    survivor.recordRelease(at: 20, freed: false, retainCount: 2)
    #expect(survivor.settledState == nil)
    #expect(survivor.state(at: end) == .leaked)
    #expect(survivor.wasWaiting(at: 19) && !survivor.wasWaiting(at: 20))
    survivor.recordDealloc(at: 30)
    #expect(survivor.state(at: end) == .late)
    #expect(ObjectLifecycle(enqueuedAt: 10).state(at: end) == .neverReleased)
  }

  @Test func factsTakeTheSettledStateAndKeepAFinalOne() {
    var facts = ObjectFacts(
      id: 1, address: Address(0xa0), type: "T", queue: "q", enqueuedAt: 10, enqueuedBy: nil)
    facts.lifecycle.recordRelease(at: 20, freed: false, retainCount: 3)
    #expect(facts.releasedAt == 20 && facts.freedByRelease == false)
    #expect(facts.retainCountAfterRelease == 3 && facts.state == nil)
    facts.state = .leaked
    facts.lifecycle.recordDealloc(at: 30)
    #expect(facts.deallocAt == 30 && facts.state == .late)
  }

  private struct Survivor: SurvivingObject {
    var address: Address
    var enqueuedAt: Int64 = 0
    var releasedAt: Int64 = 1
  }

  @Test func anAddressForgetsASurvivorOnlyWhileItIsTheLatestThere() {
    var survivors = Survivors<Survivor>()
    survivors.insert(1, Survivor(address: Address(0xa0)))
    survivors.insert(2, Survivor(address: Address(0xa0)))
    survivors.remove(1)
    #expect(survivors.id(at: Address(0xa0)) == 2)
    survivors.remove(2)
    #expect(survivors.id(at: Address(0xa0)) == nil)
    #expect(survivors.isEmpty)
  }

  @Test func theSummaryAndTheTypeRowsAreSumsOfTheSameCounts() throws {
    let report = try Fixtures.report(["several-sessions.jsonl", "feed.jsonl"])
    #expect(report.types.count > 1)
    var total = LifecycleCounts()
    for row in report.types { total.add(row.counts) }
    #expect(total == report.summary.counts)
    #expect(report.summary.enqueued > 0 && report.summary.falseLeaks > 0)
    for state in ObjectState.allCases {
      #expect(report.types.reduce(0) { $0 + $1[state] } == report.summary[state], "\(state)")
    }
    #expect(
      report.summary.released
        == report.summary.freed + report.summary.late + report.summary.leaked)
  }

  /// `Codable` keeps the JSON format's flat `summary` object, keys in its order.
  @Test func aSummaryCodesAsTheFlatObjectOfTheJSONFormat() throws {
    let report = try Fixtures.report(["several-sessions.jsonl", "feed.jsonl"])
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let data = try encoder.encode(report.summary)
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Int])
    #expect(Set(object.keys) == Set(report.summary.fields.map(\.key)))
    for (key, value) in report.summary.fields { #expect(object[key] == value, "\(key)") }
    #expect(try JSONDecoder().decode(Summary.self, from: data) == report.summary)
  }
}
