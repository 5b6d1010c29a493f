import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing

/// Different suppressions covering different members of one finding: each suppression gets
/// its own part, with its reason and its count, in every output.
@Suite struct SeveralSuppressionsTests {
  /// `Feed.Model`: four leaked members with one signature, reached through three outer
  /// callers (the settings flow once, the SDK once, the legacy bridge twice).
  /// `Feed.Other`: two leaked members, through the SDK and the legacy bridge only.
  static let log =
    [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/app/Feed","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      stack(1, outer: "Feed.SettingsFlow.dismiss() -> ()", ip: "0x40"),
      stack(2, outer: "ThirdPartySDK.Session.refresh() -> ()", ip: "0x50"),
      stack(3, outer: "Legacy.Bridge.detach() -> ()", ip: "0x60"),
      enqueue(1, type: "Feed.Model", stack: 1),
      enqueue(2, type: "Feed.Model", stack: 2),
      enqueue(3, type: "Feed.Model", stack: 3),
      enqueue(4, type: "Feed.Model", stack: 3),
      enqueue(5, type: "Feed.Other", stack: 2),
      enqueue(6, type: "Feed.Other", stack: 3),
      #"{"ev":"drain","t":100,"q":"shared","n":6,"tid":8,"why":"timer"}"#,
    ]
    + (1...6).map { #"{"ev":"release","t":\#(110 + $0),"id":\#($0),"tid":8,"freed":false,"rc":1}"# }
    + [#"{"ev":"end","t":200,"why":"exit","pending":0,"lost":0}"#]

  static let suppressions = """
    frame:ThirdPartySDK.*    the SDK keeps its models
    frame:Legacy.*           the legacy bridge is retired in 3.0
    """

  static func stack(_ id: Int, outer: String, ip: String) -> String {
    let inner = [
      "Feed.Model.close() -> ()", "Feed.Screen.close() -> ()", "Feed.Router.pop() -> ()",
    ]
    let frames = (inner.enumerated().map { ("0x\($0.offset + 1)0", $0.element) } + [(ip, outer)])
      .map { #"{"ip":"\#($0.0)","sym":"\#($0.1)"}"# }
    return #"{"ev":"stack","id":\#(id),"frames":[\#(frames.joined(separator: ","))]}"#
  }

  static func enqueue(_ id: Int, type: String, stack: Int) -> String {
    #"{"ev":"enqueue","t":\#(id * 10),"id":\#(id),"obj":"0x\#(id)000","type":"\#(type)","q":"shared","tid":7,"depth":\#(id),"stack":\#(stack)}"#
  }

  func result() throws -> GateResult {
    let scratch = try ScratchDirectory("several-suppressions")
    let url = scratch.url.appendingPathComponent("several-suppressions.jsonl")
    try Data((Self.log.joined(separator: "\n") + "\n").utf8).write(to: url)
    defer { scratch.remove() }
    var reader = LogReader()
    var analyzer = Analyzer()
    try reader.read([LogInput(path: url.path, displayName: "several.jsonl")], into: &analyzer)
    let report = analyzer.finish(inputs: ["several.jsonl"])
    try #require(report.findings.map(\.count) == [4, 2])
    let list = try SuppressionList.parse(Self.suppressions, file: "s.txt")
    return Gate(suppressions: list).evaluate(report)
  }

  @Test func eachSuppressionGetsItsOwnPartWithItsCount() throws {
    let result = try result()
    #expect(result.result(.leaked).count == 1)
    #expect(result.result(.leaked).suppressed == 5)
    #expect(result.unusedSuppressions.isEmpty)
    let parts = result.findings.map {
      ($0.finding.signature.type, $0.finding.count, $0.suppressedBy?.line, $0.reportIndex)
    }
    try #require(parts.count == 5)
    #expect(parts[0] == ("Feed.Model", 1, nil, 0))
    #expect(parts[1] == ("Feed.Model", 1, 1, 0))
    #expect(parts[2] == ("Feed.Model", 2, 2, 0))
    #expect(parts[3] == ("Feed.Other", 1, 1, 1))
    #expect(parts[4] == ("Feed.Other", 1, 2, 1))
    #expect(result.suppressedFindingCount == 2)
    // Each part has its own members and an explanation that counts only them.
    #expect(result.findings[2].finding.examples.compactMap(\.id) == [3, 4])
    #expect(result.findings[2].finding.explanation.hasPrefix("2 Feed.Model objects enqueued by"))
    #expect(result.findings[1].finding.explanation.hasPrefix("1 Feed.Model object enqueued by"))
    #expect(result.findings[0].finding.explanation.hasPrefix("1 Feed.Model object enqueued by"))
  }

  @Test func textVerdictShowsEveryReasonNextToItsCount() throws {
    let result = try self.result()
    let text = GateTextRenderer().render(result)
    let model = try id(of: "Feed.Model", in: result)
    let other = try id(of: "Feed.Other", in: result)
    #expect(text.contains("Suppressed (2 findings, 5 not counted)\n"))
    let sdk = "by frame:ThirdPartySDK.* (s.txt:1): the SDK keeps its models"
    let legacy = "by frame:Legacy.* (s.txt:2): the legacy bridge is retired in 3.0"
    #expect(
      text.contains("leaked after release: Feed.Model from Model.close() (×1) id:\(model) \(sdk)\n")
    )
    #expect(
      text.contains(
        "leaked after release: Feed.Model from Model.close() (×2) id:\(model) \(legacy)\n"))
    #expect(
      text.contains("leaked after release: Feed.Other from Model.close() (×1) id:\(other) \(sdk)\n")
    )
    #expect(
      text.contains(
        "leaked after release: Feed.Other from Model.close() (×1) id:\(other) \(legacy)\n"))
  }

  @Test func jsonVerdictHasOneEntryPerSuppressionAndFinding() throws {
    let json = GateJSONRenderer().render(try result())
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let suppressed = try #require(object["suppressed"] as? [[String: Any]])
    let rows = suppressed.map {
      (
        ($0["finding"] as? [String: Any])?["type"] as? String,
        ($0["finding"] as? [String: Any])?["count"] as? Int,
        ($0["suppression"] as? [String: Any])?["reason"] as? String
      )
    }
    try #require(rows.count == 4)
    #expect(rows[0] == ("Feed.Model", 1, "the SDK keeps its models"))
    #expect(rows[1] == ("Feed.Model", 2, "the legacy bridge is retired in 3.0"))
    #expect(rows[2] == ("Feed.Other", 1, "the SDK keeps its models"))
    #expect(rows[3] == ("Feed.Other", 1, "the legacy bridge is retired in 3.0"))
  }

  @Test func markdownListsEveryReason() throws {
    let result = try self.result()
    let markdown = GateMarkdownRenderer().render(result)
    let model = try id(of: "Feed.Model", in: result)
    #expect(markdown.contains("### Suppressed (2)\n"))
    #expect(
      markdown.contains(
        "- leaked after release: `Feed.Model from Model.close()` ×2 `id:\(model)` by `frame:Legacy.*`"
          + " (s.txt:2): the legacy bridge is retired in 3.0\n"))
    #expect(
      markdown.contains(
        "- leaked after release: `Feed.Model from Model.close()` ×1 `id:\(model)`"
          + " by `frame:ThirdPartySDK.*`"
          + " (s.txt:1): the SDK keeps its models\n"))
  }

  @Test func junitKeepsOneCasePerSignatureAndNamesEverySuppression() throws {
    let root = try ParsedElement.parse(JUnitRenderer().render(try result()))
    let suite = try #require(root.child("testsuite"))
    let cases = suite.children("testcase")
    #expect(cases.count == 4 + 2)
    #expect(suite["tests"] == "6")
    #expect(suite["failures"] == "2")  // --max-leaked and Feed.Model
    #expect(suite["skipped"] == "1")  // Feed.Other
    #expect(cases.filter { $0.child("failure") != nil }.count == 2)
    #expect(cases.filter { $0.child("skipped") != nil }.count == 1)

    let model = try #require(
      cases.first { $0["name"]?.hasPrefix("Feed.Model from Model.close() [id:") == true })
    let failure = try #require(model.child("failure"))
    #expect(failure["message"] == "leaked after release: Feed.Model from Model.close() (×1)")
    #expect(failure.text.hasPrefix("1 Feed.Model object enqueued by Model.close()"))
    #expect(
      failure.text.hasSuffix(
        "3 more not counted:\n"
          + "- ×1 suppressed by frame:ThirdPartySDK.* (s.txt:1): the SDK keeps its models\n"
          + "- ×2 suppressed by frame:Legacy.* (s.txt:2): the legacy bridge is retired in 3.0"))

    let other = try #require(
      cases.first { $0["name"]?.hasPrefix("Feed.Other from Model.close() [id:") == true })
    #expect(
      other.child("skipped")?["message"]
        == "suppressed by frame:ThirdPartySDK.* (s.txt:1): the SDK keeps its models (×1)\n"
        + "suppressed by frame:Legacy.* (s.txt:2): the legacy bridge is retired in 3.0 (×1)")
  }

  @Test func githubAnnotatesOnlyWhatCounts() throws {
    let annotations = GitHubRenderer().annotations(try result())
    #expect(annotations.map(\.level) == [.error, .error])
    #expect(
      annotations[0].message
        == "--max-leaked: 1 leaked object, 1 over --max-leaked 0, 5 more suppressed")
    #expect(
      annotations[1].title
        == "dealloctrace: leaked after release: Feed.Model from Model.close() (×1)"
        + " [id:\(try id(of: "Feed.Model", in: try result()))]")
  }

  /// The id of the finding of `type`.
  func id(of type: String, in result: GateResult) throws -> FindingID {
    try #require(result.findings.first { $0.finding.signature.type == type }).finding.id
  }
}
