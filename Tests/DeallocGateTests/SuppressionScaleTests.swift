import DeallocAnalysis
import Foundation
import GateInvariants
import TestSupport
import Testing

/// Issue 12, item 12: suppressions and the step summary scale with their input. Time is
/// bounded by the fuzzer (`scripts/fuzz`, a per-input timeout on long inputs), not here:
/// these tests pin what the fast paths must still answer.
@Suite struct SuppressionScaleTests {
  /// The fast matcher (literal head and tail first, then segments at their leftmost place)
  /// agrees with the textbook table on the cases where such shortcuts go wrong: a head and a
  /// tail that overlap, segments that repeat, `?` and sets between stars.
  @Test func theFastMatcherAgreesWithTheReference() {
    let cases = [
      "ab*ba", "aba", "abba", "a*a", "a", "aa", "*a*a*", "aXa", "*ab*ab", "abab", "ab",
      "?*?", "x", "xy", "*[ab]?b*", "zab-b", "a?c*c?a", "abcca", "abccxca", "*aab",
      "aaaab", "aab", "Feed.*Cell*.*", "Feed.NodeCell.x", "\\*x*", "*x", "é*é", "éé",
      "*aaaa*aaab", "aaaaaaaaaaaaaaaaab", "[!a]*", "", "b",
    ]
    #expect(GateInvariants.globViolations(cases).isEmpty)
  }

  @Test func manyPatternsAgainstALongTypeName() throws {
    let type = String(repeating: "Generic<", count: 12_500) + "Leaf"
    var lines: [String] = []
    for index in 0..<2_000 {
      lines.append("type:Module\(index).*  never matches")
      lines.append("type:*Leaf\(index)  never matches")
    }
    lines.append("type:Generic<*<Leaf  matches")
    let list = try SuppressionList.parse(lines.joined(separator: "\n"), file: "s.txt")
    let matching = list.suppressions.filter { $0.matches(type: type, stack: []) }
    #expect(matching.map(\.line) == [4_001])
  }

  @Test func theStepSummaryStopsAtGitHubsLimitWithANote() throws {
    let scratch = try ScratchDirectory("summary")
    let path = scratch.url.appendingPathComponent("summary.md").path
    defer { scratch.remove() }
    try Data("earlier step\n".utf8).write(to: URL(fileURLWithPath: path))
    var markdown = "## dealloctrace report\n\n<details>\n\n```\n"
    while markdown.utf8.count < 2 << 20 { markdown += "frame é😀 Feed.close() -> ()\n" }
    markdown += "```\n\n</details>\n"

    try StepSummary.append(markdown, to: path, fullReport: "dealloctrace report x.jsonl")

    let written = try String(contentsOfFile: path, encoding: .utf8)
    #expect(written.hasPrefix("earlier step\n## dealloctrace report"))
    #expect(written.utf8.count - "earlier step\n".utf8.count <= StepSummary.maximumBytes)
    #expect(written.contains("the report was cut here"))
    #expect(written.contains("`dealloctrace report x.jsonl`"))
    // The cut closes what it cut into: the fence, then the <details>.
    let lines = written.split(separator: "\n")
    #expect(lines.filter { $0.hasPrefix("```") }.count % 2 == 0)
    #expect(written.components(separatedBy: "</details>").count == 2)
  }
}
