import DeallocLog
import Testing

@testable import DeallocAnalysis

/// The finding sentences the golden reports do not reach: a true-leak group without its first
/// check's verdict, and a group whose first member names no queue.
@Suite struct ExplanationsTests {
  private static func finding(_ kind: Finding.Kind, count: Int) -> Finding {
    Finding(
      kind: kind, signature: Signature(type: "Feed.Node", frames: []), stack: [], holders: nil,
      count: count, examples: [], explanation: "")
  }

  @Test func aTrueLeakGroupWithoutItsFirstVerdictCountsItsChecks() {
    #expect(
      Explanations.finding(Self.finding(.trueLeak, count: 1), firstCheck: nil)
        == "1 Feed.Node object seen alive by a leak check: a real leak.")
    #expect(
      Explanations.finding(Self.finding(.trueLeak, count: 2), firstCheck: nil)
        == "2 Feed.Node objects seen alive by a leak check: a real leak."
        + " (2 checks with this signature; the first:)")
  }

  @Test func aGroupWithoutAQueueNameSaysAQueue() {
    #expect(
      Explanations.finding(Self.finding(.leaked, count: 1), firstCheck: nil)
        == "1 Feed.Node object was released by a queue but stayed alive to the end of the"
        + " session: something else still holds it. A real leak.")
    #expect(
      Explanations.finding(Self.finding(.neverReleased, count: 3), firstCheck: nil)
        == "3 Feed.Node objects were still in a queue when the session ended: the process"
        + " exited before the queue released them, so the queue held that memory to the end.")
  }
}
