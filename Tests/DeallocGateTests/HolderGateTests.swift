import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing

/// `dealloctrace check`'s outputs of `fixtures/holders.jsonl` (a session recorded with
/// holders on): the text verdict, the JUnit failure bodies and the GitHub annotations show
/// each finding's holder path, against `fixtures/gate/expected/holders.*`.
@Suite struct HolderGateTests {
  func result() throws -> GateResult {
    let input = LogInput(
      path: GateFixtures.root.appendingPathComponent("fixtures/holders.jsonl").path,
      displayName: "fixtures/holders.jsonl")
    var reader = LogReader()
    var analyzer = Analyzer()
    try reader.read([input], into: &analyzer)
    return Gate().evaluate(analyzer.finish(inputs: [input.displayName]))
  }

  @Test func goldenOutputs() throws {
    let result = try result()
    try GateFixtures.assertGolden(GateTextRenderer().render(result), "holders.txt")
    try GateFixtures.assertGolden(JUnitRenderer().render(result), "holders.junit.xml")
    try GateFixtures.assertGolden(GitHubRenderer().render(result), "holders.github.txt")
  }

  @Test func everyOutputCarriesTheCyclePath() throws {
    let result = try result()
    let cycle =
      "retain cycle: Shop.CartModel.onChange → closure context (captures CartModel, String)"
      + " → Shop.CartModel"
    #expect(GateTextRenderer().render(result).contains(cycle))
    #expect(JUnitRenderer().render(result).contains(cycle))
    // One annotation per line; the path's lines are joined by an escaped line break.
    let annotation = try #require(
      GitHubRenderer().render(result).split(separator: "\n").first { $0.contains("CartModel") })
    #expect(annotation.contains(cycle))
    #expect(annotation.contains("%0A"))
  }

  @Test func hostileHolderNamesAreEscapedPerFormat() throws {
    let lines = [
      #"{"ev":"session","v":1,"t":0,"holders":true}"#,
      #"{"ev":"check","t":10,"obj":"0x10","type":"T.X","alive":true,"label":"L"}"#,
      #"{"ev":"holders","t":11,"obj":"0x10","type":"T.X","why":"check","direct":1,"paths":[{"root":{"kind":"global","sym":"T.g\n::error::x<b>&\"","mod":"/m"},"steps":[{"type":"T.Y","obj":"0x20","off":8,"field":"f\r%0A"}]}]}"#,
      #"{"ev":"end","t":20,"why":"exit","pending":0,"lost":0}"#,
    ]
    let scratch = try ScratchDirectory("holders-hostile")
    let url = scratch.url.appendingPathComponent("holders-hostile.jsonl")
    defer { scratch.remove() }
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    var reader = LogReader()
    var analyzer = Analyzer()
    try reader.read([LogInput(path: url.path, displayName: "hostile.jsonl")], into: &analyzer)
    let result = Gate().evaluate(analyzer.finish(inputs: ["hostile.jsonl"]))

    let github = GitHubRenderer().render(result)
    for line in github.split(separator: "\n") { #expect(line.hasPrefix("::")) }
    #expect(github.contains("T.g%0A::error::x<b>&\""))
    #expect(github.contains("T.Y.f%0D%250A"))
    let junit = JUnitRenderer().render(result)
    // The line break stays; the ':' that would start a workflow command is a reference.
    #expect(junit.contains("T.g\n&#58;:error::x&lt;b&gt;&amp;\""))
    #expect(!junit.contains("\n::"))
    #expect(!junit.contains("<b>"))
    let text = GateTextRenderer().render(result)
    #expect(text.contains(#"global T.g\n::error::x<b>&""#))
    #expect(!text.contains("\n::error"))
  }
}
