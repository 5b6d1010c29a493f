import DeallocLog
import Testing

extension LeakTrackingTrait {
  /// Which objects `.leakTracking` checks at the end of each test.
  public struct Coverage: Sendable, Hashable {
    private let checksEveryObject: Bool

    /// The objects the test names (`expectDeallocated`, `LeakTracker.current`): the default.
    public static let watchedObjects = Coverage(checksEveryObject: false)

    /// Every object too, named or not: a whole-process leak census at the test's start and
    /// another at its end (after the queues drained) fail the test for each `ROOT CYCLE` or
    /// `ROOT LEAK` group of the program's types that appeared meanwhile, with its tree. The
    /// libraries' own leaks never count.
    ///
    /// Needs the live-object registry from the process's start: `DEALLOCTRACE_LEAKS=1` in
    /// the test's environment. Without it, the first test says so once, as a warning, and
    /// only the watched objects are checked.
    ///
    /// Under parallel tests, a leak is blamed on the test that was running alone while it
    /// appeared; when others ran at the same time, each of them fails with it and the
    /// message names the others (the census cannot see which test allocated an object).
    /// `.serialized` makes every blame exact. Each test end drains every `DeallocQueue`.
    public static let allObjects = Coverage(checksEveryObject: true)
  }
}

/// One test's place on the census timeline: begun before the test runs, ended after it.
struct AllObjectsCensus {
  let ticket: CensusTimeline.Ticket
  let location: SourceLocation

  /// Takes the test's start census; nil when the census cannot run, which the first test
  /// that finds so records as a warning.
  static func begin(_ test: Test, _ testCase: Test.Case?) -> AllObjectsCensus? {
    switch CensusTimeline.shared.begin(scopeLabel(test), isCase: testCase?.isParameterized == true)
    {
    case .started(let ticket):
      return AllObjectsCensus(ticket: ticket, location: test.sourceLocation)
    case .unavailable(let reason, let firstTime):
      if firstTime {
        Issue.record(
          Comment(
            rawValue: ".leakTracking(.allObjects) checks only the watched objects in this run: "
              + "the leak census cannot run: \(reason)"),
          severity: .warning, sourceLocation: test.sourceLocation)
      }
      return nil
    }
  }

  /// Takes the end census and records an issue for each finding that appeared.
  func end() {
    switch CensusTimeline.shared.end(ticket) {
    case .unavailable(let reason):
      Issue.record(
        Comment(rawValue: "the leak census at the end of the test could not run: \(reason)"),
        sourceLocation: location)
    case .leaked(let leaks):
      for leak in leaks {
        let message = Self.message(leak)
        Issue.record(
          LeakIssueTitle(description: Self.title(leak.group)), Comment(rawValue: message),
          sourceLocation: location)
        recordLeakAttachment(
          message + "\n", type: leak.group.tree.first?.type ?? "census", at: location)
      }
      if !leaks.isEmpty { SessionReportAttachment.record(at: location) }
    }
  }

  /// `leaked: Shop.Order, in a ROOT CYCLE through payment, order`: the issue's title.
  static func title(_ group: CensusGroup) -> String {
    let root = group.tree.first?.type ?? group.members.first?.type ?? "?"
    guard group.kind == .cycle else { return "leaked: \(root), in a ROOT LEAK" }
    let fields = group.edges.map(\.field)
    return "leaked: \(root), in a ROOT CYCLE"
      + (fields.isEmpty ? "" : " through " + fields.joined(separator: ", "))
  }

  /// `leaked: …` (what and how much), the group's tree as `leaks` prints it, then whom it is
  /// blamed on.
  static func message(_ leak: CensusTimeline.Leak) -> String {
    let group = leak.group
    let perGroup = group.count / max(1, group.instances)
    let bytes = group.bytes / max(1, group.instances)
    let types = group.members.map(\.type)
    let what =
      group.kind == .cycle
      ? "a ROOT CYCLE of \(types.joined(separator: ", "))"
      : "a ROOT LEAK: \(types.first ?? "?")\(types.count > 1 ? " and what it keeps" : "")"
    let times = leak.newInstances > 1 ? "\(leak.newInstances) × " : ""
    let blame =
      leak.alsoRunning.isEmpty
      ? "made by this test: no other test under .leakTracking(.allObjects) ran while it "
        + "appeared"
      : "made by this test or by one that ran at the same time: "
        + leak.alsoRunning.joined(separator: ", ")
        + " (the census cannot tell which; .serialized tells them apart)"
    return
      ([
        "leaked: \(times)\(what), \(perGroup) \(perGroup == 1 ? "object" : "objects") "
          + "(\(bytes) bytes) that nothing reaches since the test started"
      ] + CensusTreeText.lines(group) + [blame]).joined(separator: "\n")
  }
}
