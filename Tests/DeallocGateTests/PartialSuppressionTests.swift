import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing

/// A `frame:` suppression judges each member of a finding by its own enqueue stack: two
/// leaked objects share a signature (type and first three caller frames) but were reached
/// through different outer callers, and only one of those callers is suppressed.
@Suite struct PartialSuppressionTests {
  /// Two survivors of one type, enqueued through the same three inner frames and different
  /// outer ones; neither ever dies, so both are leaked and form one finding.
  static let log =
    [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/app/Feed","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      stack(1, outer: "Feed.SettingsFlow.dismiss() -> ()", ip: "0x40"),
      stack(2, outer: "ThirdPartySDK.Session.refresh() -> ()", ip: "0x50"),
      #"{"ev":"enqueue","t":10,"id":1,"obj":"0x1000","type":"Feed.Model","q":"shared","tid":7,"depth":1,"stack":1}"#,
      #"{"ev":"enqueue","t":20,"id":2,"obj":"0x2000","type":"Feed.Model","q":"shared","tid":7,"depth":2,"stack":2}"#,
      #"{"ev":"drain","t":100,"q":"shared","n":2,"tid":8,"why":"timer"}"#,
      #"{"ev":"release","t":110,"id":1,"tid":8,"freed":false,"rc":1}"#,
      #"{"ev":"release","t":120,"id":2,"tid":8,"freed":false,"rc":1}"#,
      #"{"ev":"end","t":200,"why":"exit","pending":0,"lost":0}"#,
    ].joined(separator: "\n") + "\n"

  static func stack(_ id: Int, outer: String, ip: String) -> String {
    let inner = [
      "Feed.Model.close() -> ()", "Feed.Screen.close() -> ()", "Feed.Router.pop() -> ()",
    ]
    let frames = (inner.enumerated().map { ("0x\($0.offset + 1)0", $0.element) } + [(ip, outer)])
      .map { #"{"ip":"\#($0.0)","sym":"\#($0.1)"}"# }
    return #"{"ev":"stack","id":\#(id),"frames":[\#(frames.joined(separator: ","))]}"#
  }

  func report() throws -> Report {
    let scratch = try ScratchDirectory("partial-suppression")
    let url = scratch.url.appendingPathComponent("partial-suppression.jsonl")
    try Data(Self.log.utf8).write(to: url)
    defer { scratch.remove() }
    var reader = LogReader()
    var analyzer = Analyzer()
    try reader.read([LogInput(path: url.path)], into: &analyzer)
    return analyzer.finish(inputs: [url.path])
  }

  @Test func bothMembersFormOneFinding() throws {
    let report = try report()
    #expect(report.findings.count == 1)
    #expect(report.findings.first?.count == 2)
  }

  @Test func aFrameSuppressionSetsAsideOnlyTheMembersWhoseStackItMatches() throws {
    let list = try SuppressionList.parse(
      "frame:ThirdPartySDK.*  the SDK keeps its models\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(try report())

    #expect(result.result(.leaked).count == 1, "the settings flow's model still counts")
    #expect(result.result(.leaked).suppressed == 1)
    #expect(!result.passed)
    let counted = try #require(result.counted.first)
    #expect(counted.finding.count == 1)
    #expect(counted.finding.stack.last?.symbol == "Feed.SettingsFlow.dismiss() -> ()")
    #expect(counted.finding.examples.map(\.id) == [1])
    let suppressed = try #require(result.suppressed.first)
    #expect(suppressed.finding.count == 1)
    #expect(suppressed.finding.examples.map(\.id) == [2])
    #expect(suppressed.suppressedBy?.reason == "the SDK keeps its models")
    #expect(result.unusedSuppressions.isEmpty)
  }

  @Test func aSuppressionMatchingEveryMemberSetsTheWholeFindingAside() throws {
    let list = try SuppressionList.parse("frame:Feed.Router.pop*  known\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(try report())
    #expect(result.passed)
    #expect(result.result(.leaked).suppressed == 2)
    #expect(result.suppressed.count == 1)
    #expect(result.counted.isEmpty)
  }
}
