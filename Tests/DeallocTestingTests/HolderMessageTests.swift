import DeallocLog
import DeallocTrace
import Testing

@testable import DeallocTesting

/// The leak assertions' failure message shows who holds the object, from a HOLDERS-VALUE
/// (canned here, as `DeallocTrace.holdersJSON(of:others:)` returns it) parsed and
/// rendered by the report's own parser and text; with holders off, it says how to turn them
/// on.
@Suite struct HolderMessageTests {
  static let cacheValue =
    #"{"direct":1,"more":0,"paths":[{"root":{"kind":"global","sym":"Shop.ImageCache.shared","mod":"/abs/path/of/Shop"},"steps":[{"type":"Shop.ImageCache","obj":"0x7f75aa100000","off":24,"field":"keep"},{"type":"_ContiguousArrayStorage<AnyObject>","obj":"0x7f75aa100100","off":48,"element":2,"count":3}]}],"scan_us":812}"#

  func finding(_ outcome: HolderLookup.Outcome) -> LeakFinding {
    LeakFinding(
      typeName: "Shop.Thumb", address: "0x7f75aa001c10", state: .notQueued,
      otherStrongReferences: 1, traceID: nil,
      callSite: CallSite(fileID: "ShopTests/T.swift", filePath: "/s/T.swift", line: 7, column: 5),
      label: "ShopTests.testGallery", traceLog: nil, enqueueStack: [], holderOutcome: outcome)
  }

  @Test func thePathIsInTheMessageAsEveryReportShowsIt() {
    let message = finding(HolderLookup.outcome(json: Self.cacheValue)).description
    #expect(
      message.contains(
        """
          state: leaked: it waits in no DeallocQueue (never handed to one, or released by one earlier) and 1 other strong reference holds it
          held by (shortest path from a root):
            global Shop.ImageCache.shared  (Shop)
            → Shop.ImageCache.keep
            → [element 2 of 3]  _ContiguousArrayStorage<AnyObject>
            → Shop.Thumb 0x7f75…c10
          enqueue stack: not recorded
        """), "\(message)")
  }

  @Test func theMessageRendersWithTheReportsOwnText() throws {
    let report = try #require(try HolderReport.parse(json: Self.cacheValue))
    let lines = HolderPathText.lines(report, type: "Shop.Thumb", address: Address(0x7f75_aa00_1c10))
    let message = finding(.found(report)).description
    #expect(message.contains(lines.map { "  " + $0 }.joined(separator: "\n")))
    #expect(finding(.found(report)).holders == report)
  }

  @Test func aCycleIsOneLine() {
    let value =
      #"{"direct":1,"more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"Shop.CartModel","obj":"0x7f75aa001c10","off":16,"field":"onChange"},{"type":"closure context","obj":"0x7f75aa003100","off":16,"captures":["Shop.CartModel","Swift.String"]}]}]}"#
    let message = finding(HolderLookup.outcome(json: value)).description
    #expect(
      message.contains(
        "\n  retain cycle: Shop.CartModel.onChange → closure context (captures CartModel, String)"
          + " → Shop.Thumb\n"), "\(message)")
  }

  @Test func withHoldersOffTheMessageSaysHowToTurnThemOn() {
    let message = finding(.off).description
    #expect(message.contains("held by: unknown; set DEALLOCTRACE_HOLDERS=1"), "\(message)")
    #expect(finding(.off).holders == nil)
  }

  @Test func anUnreadableOrEmptyAnswerSaysSoInOneLine() {
    let bad = finding(HolderLookup.outcome(json: #"{"direct":1}"#)).description
    #expect(
      bad.contains(
        "held by: unknown; the holder scan's answer could not be read: holders value without 'paths'"
      ), "\(bad)")
    let gone = finding(HolderLookup.outcome(json: "null")).description
    #expect(gone.contains("held by: unknown; the object is not in the registry"), "\(gone)")
  }

  @Test func aLiveLookIsOffExactlyWhenHoldersAreOff() {
    final class Object {}
    let object = Object()
    #expect((HolderLookup.look(at: object, others: 0) == .off) == !DeallocTrace.holdersEnabled)
  }
}
