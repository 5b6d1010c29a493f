import DeallocAnalysis
import Foundation
import Testing

/// Every output names every finding by its id: the reports (text, JSON, Markdown, HTML) and
/// the gate's (text, JSON, Markdown, JUnit test-case names, GitHub annotation titles).
@Suite struct IDInEveryOutputTests {
  @Test func everyReportFormatCarriesEveryID() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let ids = report.findings.map(\.id.hex)
    #expect(ids.count == 5)
    for (name, text) in [
      ("text", TextRenderer().render(report)), ("json", JSONRenderer().render(report)),
      ("markdown", MarkdownRenderer().render(report)), ("html", HTMLRenderer().render(report)),
    ] {
      for id in ids { #expect(text.contains(id), "\(name) lacks \(id)") }
    }
  }

  @Test func everyGateOutputCarriesTheIDsOfWhatItLists() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    let ids = result.findings.map(\.finding.id.hex)
    for (name, text) in [
      ("text", GateTextRenderer().render(result)), ("json", GateJSONRenderer().render(result)),
      (
        "markdown", GateMarkdownRenderer().render(result) + MarkdownRenderer().render(result.report)
      ),
    ] {
      for id in ids { #expect(text.contains(id), "\(name) lacks \(id)") }
    }
    let suite = try #require(
      try ParsedElement.parse(JUnitRenderer().render(result)).child("testsuite"))
    let names = suite.children("testcase").compactMap { $0["name"] }
    for id in ids { #expect(names.contains { $0.hasSuffix(" [id:\(id)]") }, "JUnit lacks \(id)") }
    // Annotations go to what counts (suppressed findings get none).
    let titles = GitHubRenderer().annotations(result).map(\.title)
    for judged in result.counted {
      #expect(titles.contains { $0.hasSuffix("[id:\(judged.finding.id)]") })
    }
  }
}

/// Source paths in CI outputs, relative to the workspace.
@Suite struct WorkspacePathsTests {
  @Test(arguments: [
    (["GITHUB_WORKSPACE": "/gh", "CI_PROJECT_DIR": "/gl"], "/gh"),
    (["GITHUB_WORKSPACE": "", "CI_PROJECT_DIR": "/gl"], "/gl"),
    (["CI_PROJECT_DIR": "/gl"], "/gl"),
    ([:], "/cwd"),
  ])
  func theWorkspaceIsGitHubsElseGitLabsElseTheCurrentDirectory(
    _ environment: [String: String], _ root: String
  ) {
    #expect(WorkspacePaths.fromEnvironment(environment, currentDirectory: "/cwd").root == root)
  }

  @Test func pathsInsideAreRelativeAndPathsOutsideStayAbsolute() {
    let paths = WorkspacePaths(root: "/ci/work/feed/", currentDirectory: "/ci/work/feed")
    #expect(paths.display("/ci/work/feed/Sources/A.swift") == "Sources/A.swift")
    #expect(paths.display("/ci/work/feedback/A.swift") == "/ci/work/feedback/A.swift")
    #expect(paths.display("/usr/lib/swift/B.swift") == "/usr/lib/swift/B.swift")
    #expect(paths.relative("/usr/lib/swift/B.swift") == nil)
    #expect(paths.display("./.dealloctrace-baseline.json") == ".dealloctrace-baseline.json")
    #expect(WorkspacePaths(root: nil).display("/abs/x.swift") == "/abs/x.swift")
  }

  @Test func junitAndMarkdownNameFramesRelativeToTheWorkspace() throws {
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: FixtureSymbolizer())
    let workspace = WorkspacePaths(root: "/ci/work/feed")
    var junit = JUnitRenderer()
    junit.workspace = workspace
    let xml = junit.render(Gate().evaluate(report))
    #expect(xml.contains(#"file="Sources/Feed/FeedScreen.swift" line="300""#))
    #expect(xml.contains("Feed.FeedScreen.close() -&gt; () at Sources/Feed/FeedScreen.swift:300"))
    #expect(!xml.contains("/ci/work/feed"))
    var markdown = MarkdownRenderer()
    markdown.workspace = workspace
    let text = markdown.render(report)
    #expect(text.contains("Feed.FeedScreen.close() -> () at Sources/Feed/FeedScreen.swift:300"))
    #expect(!text.contains("/ci/work/feed"))
    // The verdict names the suppressions file and the baseline relative to it too.
    var baseline = Baseline(recording: Gate().evaluate(report), path: "/ci/work/feed/b.json")
    baseline.entries.removeFirst()
    let suppressions = try SuppressionList.parse(
      "type:Feed.ImageDecoder* pool\n", file: "/ci/work/feed/.dealloctrace-suppressions")
    let verdict = GateMarkdownRenderer(workspace: workspace).render(
      Gate(suppressions: suppressions, baseline: baseline).evaluate(report))
    #expect(verdict.contains("(.dealloctrace-suppressions:1)"))
    #expect(verdict.contains("### Known, in the baseline `b.json`"))
    #expect(!verdict.contains("/ci/work/feed"))
    // Without a workspace, nothing changes.
    #expect(
      MarkdownRenderer().render(report).contains(
        "at /ci/work/feed/Sources/Feed/FeedScreen.swift:300"))
  }
}
