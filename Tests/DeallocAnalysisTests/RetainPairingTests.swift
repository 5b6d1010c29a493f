import Foundation
import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The pairing of a retain/release history (issue 31 item 2) on hand-made histories: stack
/// similarity first, then order; the allocation and hand-overs to a queue; the recorder's
/// own references apart. And the `history` field as both parsers read it.
@Suite struct RetainPairingTests {
  /// A stack, innermost first: each name a function, each ip its own return address.
  private static func stack(_ calls: [(String, UInt64)]) -> [Frame] {
    calls.map { name, ip in
      var frame = Frame(ip: ip)
      frame.symbol = name
      return frame
    }
  }

  private static let main = ("App.main() -> ()", UInt64(0x100))

  private static func event(
    _ kind: RetainHistory.Kind, _ calls: [(String, UInt64)]
  ) -> RetainHistory.Event {
    RetainHistory.Event(kind, frames: stack(calls + [main]))
  }

  @Test func similarityComesBeforeOrder() {
    // g's retain is the oldest, but the release is f's own: it gives back f's retain.
    let history = RetainHistory(events: [
      Self.event(.allocation, [("App.Model.__allocating_init()", 0x10), ("App.setUp()", 0x200)]),
      Self.event(.retain, [("App.g()", 0x300), ("App.run()", 0x400)]),
      Self.event(.retain, [("App.f()", 0x500), ("App.run()", 0x410)]),
      Self.event(.release, [("App.f()", 0x510), ("App.run()", 0x410)]),
    ])
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[3] == 2)
    #expect(pairing.outstanding == [0, 1])
    #expect(pairing.programReferences == 3)
  }

  @Test func amongEqualsTheOldestIsGivenBack() {
    let history = RetainHistory(events: [
      Self.event(.retain, [("App.f()", 0x500), ("App.run()", 0x410)]),
      Self.event(.retain, [("App.f()", 0x504), ("App.run()", 0x410)]),
      Self.event(.release, [("App.f()", 0x510), ("App.run()", 0x410)]),
    ])
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[2] == 0)
    #expect(pairing.givenBackBy[0] == 2)
    #expect(pairing.outstanding == [1])
  }

  @Test func aCalleesRetainIsLessLikeTheCallersRelease() {
    // The release in `run` itself gives back run's own retain, not the one made in
    // `keep`, which run called: only stacks that end in the same function get the bonus.
    let history = RetainHistory(events: [
      Self.event(.retain, [("App.run()", 0x400)]),
      Self.event(.retain, [("App.keep()", 0x600), ("App.run()", 0x404)]),
      Self.event(.release, [("App.run()", 0x408)]),
    ])
    #expect(RetainPairing(history).outstanding == [1])
  }

  @Test func aHandOverPassesTheProgramsReferenceToTheQueue() {
    let enqueue = [
      ("DeallocQueue.DeallocQueue.enqueue()", UInt64(0x9000)), ("App.handOver()", 0x700),
      ("App.run()", 0x420),
    ]
    let history = RetainHistory(events: [
      Self.event(.allocation, [("App.Model.__allocating_init()", 0x10), ("App.run()", 0x400)]),
      Self.event(.retain, [("App.keep()", 0x600), ("App.run()", 0x404)]),
      Self.event(.retain, [("App.handOver()", 0x704), ("App.run()", 0x420)]),
      Self.event(.enqueue, enqueue),
      Self.event(.release, [("App.run()", 0x430)]),
      Self.event(
        .release, [("DeallocQueue.DeallocQueue.drain() -> ()", 0x9100), ("App.run()", 0x440)]),
    ])
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[3] == 2, "the hand-over gives back handOver's retain")
    #expect(pairing.gaveBack[5] == 3, "the queue's release gives back the hand-over")
    #expect(pairing.gaveBack[4] == 0, "run's release gives back the allocation")
    #expect(pairing.outstanding == [1])
    #expect(pairing.recorderOutstanding.isEmpty)
  }

  @Test func theRecordersReferencesPairAmongThemselves() {
    let tracer = ("DeallocTrace.Tracer.look()", UInt64(0x9200))
    let history = RetainHistory(events: [
      Self.event(.retain, [("App.keep()", 0x600), ("App.run()", 0x404)]),
      Self.event(.retain, [tracer, ("App.run()", 0x450)]),
      Self.event(.retain, [tracer, ("App.run()", 0x450)]),
      Self.event(.release, [("DeallocTrace.Tracer.done()", 0x9300), ("App.run()", 0x450)]),
    ])
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[3] == 1)
    #expect(pairing.outstanding == [0])
    #expect(pairing.recorderOutstanding == [2])
  }

  @Test func aCountThatRoseUnseenIsAReferenceTakenWithoutAHook() {
    // A weak reference loaded strong (no hook sees it): the next release gives that back,
    // not the program's retain.
    let tracer = ("DeallocTrace.Tracer.look()", UInt64(0x9200))
    var events = [
      Self.event(.allocation, [("App.Model.__allocating_init()", 0x10), ("App.run()", 0x400)]),
      Self.event(.retain, [("App.Model.init()", 0x20), ("App.run()", 0x404)]),
      Self.event(.retain, [tracer, ("App.run()", 0x450)]),
      Self.event(.release, [tracer, ("App.run()", 0x450)]),
      Self.event(.release, [("DeallocTrace.Tracer.done()", 0x9300), ("App.run()", 0x450)]),
    ]
    for (index, count) in [1, 2, 4, 3, 2].enumerated() { events[index].countAfter = count }
    let pairing = RetainPairing(RetainHistory(events: events))
    #expect(
      pairing.events.map(\.kind) == [.allocation, .retain, .unseen, .retain, .release, .release])
    #expect(pairing.gaveBack[4] == 2)
    #expect(pairing.gaveBack[5] == 3)
    #expect(pairing.outstanding == [0, 1])
  }

  @Test func unownedEventsPairAmongThemselves() {
    // run's unowned release gives back hold's unowned retain, though run's own strong
    // retain is more like it; the unowned retain never given back is no outstanding one.
    var events = [
      Self.event(.allocation, [("App.Model.__allocating_init()", 0x10), ("App.run()", 0x400)]),
      Self.event(.unownedRetain, [("App.hold()", 0x600), ("App.run()", 0x404)]),
      Self.event(.retain, [("App.run()", 0x408)]),
      Self.event(.unownedRelease, [("App.run()", 0x40c)]),
      Self.event(.unownedRetain, [("App.keepUnowned()", 0x700), ("App.run()", 0x410)]),
    ]
    // An unowned event leaves the strong count as it was: no reference is unseen.
    for (index, count) in [1, 1, 2, 2, 2].enumerated() { events[index].countAfter = count }
    let pairing = RetainPairing(RetainHistory(events: events))
    #expect(pairing.events.map(\.kind) == events.map(\.kind))
    #expect(pairing.gaveBack[3] == 1)
    #expect(pairing.givenBackBy[2] == nil)
    #expect(pairing.outstanding == [0, 2])
    #expect(pairing.unownedOutstanding == [4])
    #expect(pairing.programReferences == 2)
    let timeline = RetainHistoryText.timelineLines(RetainHistory(events: events))
    #expect(
      timeline.contains { $0.hasPrefix("  2. unowned-retain (count 1 after it): given back by 4") },
      "\(timeline)")
    #expect(
      timeline.contains { $0.hasPrefix("  4. unowned-release (count 2 after it): gives back 2") },
      "\(timeline)")
    #expect(
      timeline.contains {
        $0.hasPrefix(
          "  5. unowned-retain (count 2 after it): never given back (unowned: keeps the memory,"
            + " not the object)")
      }, "\(timeline)")
    let rows = RetainHistoryText.timeline(RetainHistory(events: events))
    #expect(rows.map(\.isUnowned) == [false, true, false, true, true])
    #expect(rows.map(\.outstanding) == [true, false, true, false, false])
  }

  @Test func theHTMLTableMarksTheUnownedRows() {
    let history = RetainHistory(events: [
      Self.event(.retain, [("App.run()", 0x408)]),
      Self.event(.unownedRetain, [("App.hold()", 0x600), ("App.run()", 0x404)]),
      Self.event(.unownedRelease, [("App.run()", 0x40c)]),
    ])
    var html = HTMLBuffer()
    HTMLRetainHistoryTable.render(history, into: &html)
    #expect(
      html.output.contains("<tr class=\"outstanding\"><td><strong>1</strong>"), "\(html.output)")
    #expect(
      html.output.contains("<tr class=\"unowned\"><td>2</td><td>unowned-retain</td>"),
      "\(html.output)")
    #expect(
      html.output.contains("<tr class=\"unowned\"><td>3</td><td>unowned-release</td>"),
      "\(html.output)")
    #expect(html.output.contains("3 events, 1 never given back"), "\(html.output)")
  }

  @Test func anUnownedReleaseWithNoUnownedRetainGivesBackNoStrongOne() {
    let history = RetainHistory(events: [
      Self.event(.retain, [("App.run()", 0x408)]),
      Self.event(.unownedRelease, [("App.run()", 0x40c)]),
    ])
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[1] == nil)
    #expect(pairing.outstanding == [0])
    let timeline = RetainHistoryText.timelineLines(history)
    #expect(
      timeline.contains {
        $0.hasPrefix(
          "  2. unowned-release: gives back an unowned reference taken before the history began")
      }, "\(timeline)")
  }

  static let record =
    #"{"ev":"holders","t":9,"id":3,"obj":"0x2000","type":"Shop.Order","why":"release","history":{"events":[{"op":"alloc","count":1,"frames":[{"ip":"0x10","sym":"Shop.Order.__allocating_init()"},{"ip":"0x400","sym":"Shop.checkout() -> ()"}]},{"op":"retain","count":2,"frames":[{"ip":"0x600","sym":"Shop.remember(Shop.Order) -> ()"},{"ip":"0x404","sym":"Shop.checkout() -> ()"}]},{"op":"retain","count":3,"frames":[{"ip":"0x800","sym":"Shop.render(Shop.Order) -> ()"},{"ip":"0x408","sym":"Shop.checkout() -> ()"}]},{"op":"release","count":2,"frames":[{"ip":"0x804","sym":"Shop.render(Shop.Order) -> ()"},{"ip":"0x408","sym":"Shop.checkout() -> ()"}]},{"op":"later","frames":[]}],"dropped":4},"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"Shop.Order","obj":"0x2000","off":16,"field":"me"}]}],"scan_us":5}"#

  private func holders(_ line: String, general: Bool) throws -> HolderRecord? {
    var parser = RecordParser()
    let record = try Array(line.utf8).withUnsafeBufferPointer {
      general ? try parser.parseAnyShape($0) : try parser.parse($0)
    }
    guard case .holders(let holders) = record else { return nil }
    return holders
  }

  @Test(arguments: [false, true]) func theHistoryIsReadAndItsOutstandingRetainShown(
    general: Bool
  ) throws {
    let record = try #require(try holders(Self.record, general: general))
    let history = try #require(record.holders.retainHistory)
    #expect(history.events.map(\.kind) == [.allocation, .retain, .retain, .release])
    #expect(history.events.map(\.countAfter) == [1, 2, 3, 2])
    #expect(history.droppedPaired == 4)
    let lines = HolderPathText.lines(record.holders, type: record.type, address: record.object)
    let heading = try #require(
      lines.firstIndex { $0.hasPrefix("never given back") }, "\(lines)")
    #expect(
      lines[heading]
        == "never given back (retain/release history: 2 of the 3 references the program took):")
    #expect(lines[heading + 1] == "  the allocation (count 1 after it) at:", "\(lines)")
    #expect(lines.contains("  event 2, a retain (count 2 after it), at:"), "\(lines)")
    #expect(lines.contains("    Shop.remember(Shop.Order) -> ()"), "\(lines)")
    #expect(!lines.contains { $0.contains("Shop.render") }, "\(lines)")
    #expect(lines.contains { $0.contains("4 paired events were dropped") }, "\(lines)")
    let timeline = RetainHistoryText.timelineLines(history)
    #expect(timeline.contains { $0.hasPrefix("  2. retain  (count 2 after it): OUTSTANDING") })
    #expect(timeline.contains { $0.hasPrefix("  4. release (count 2 after it): gives back 3") })
  }

  /// A history with unowned events, and an event of an OP no reader knows yet: both parsers
  /// read the unowned ones and skip the unknown one.
  static let unownedRecord =
    #"{"ev":"holders","t":9,"id":3,"obj":"0x2000","type":"Shop.Order","why":"release","history":{"events":[{"op":"alloc","count":1,"frames":[{"ip":"0x10","sym":"Shop.Order.__allocating_init()"},{"ip":"0x400","sym":"Shop.checkout() -> ()"}]},{"op":"unowned-retain","count":1,"frames":[{"ip":"0x600","sym":"Shop.Row.init(Shop.Order) -> Shop.Row"},{"ip":"0x404","sym":"Shop.checkout() -> ()"}]},{"op":"unowned-later","count":1,"frames":[]},{"op":"unowned-release","count":1,"frames":[{"ip":"0x800","sym":"Shop.Row.deinit"},{"ip":"0x408","sym":"Shop.checkout() -> ()"}]}]},"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"Shop.Order","obj":"0x2000","off":16,"field":"me"}]}],"scan_us":5}"#

  @Test(arguments: [false, true]) func unownedEventsAreReadAndAnUnknownOneSkipped(
    general: Bool
  ) throws {
    let record = try #require(try holders(Self.unownedRecord, general: general))
    let history = try #require(record.holders.retainHistory)
    #expect(history.events.map(\.kind) == [.allocation, .unownedRetain, .unownedRelease])
    #expect(history.events.map(\.countAfter) == [1, 1, 1])
    #expect(history.events[1].frames.first?.symbol == "Shop.Row.init(Shop.Order) -> Shop.Row")
    let pairing = RetainPairing(history)
    #expect(pairing.gaveBack[2] == 1)
    #expect(pairing.outstanding == [0])
    let lines = HolderPathText.lines(record.holders, type: record.type, address: record.object)
    #expect(
      lines.contains(
        "never given back (retain/release history: 1 of the 1 references the program took):"),
      "\(lines)")
    #expect(!lines.contains { $0.contains("Shop.Row") }, "\(lines)")
  }

  @Test(arguments: [false, true]) func aRecordWithoutItReadsAsBefore(general: Bool) throws {
    let plain = Self.record.replacingOccurrences(of: #""history""#, with: #""x""#)
    let record = try #require(try holders(plain, general: general))
    #expect(record.holders.retainHistory == nil)
    let lines = HolderPathText.lines(record.holders, type: record.type, address: record.object)
    #expect(!lines.contains { $0.contains("never given back") }, "\(lines)")
  }
}
