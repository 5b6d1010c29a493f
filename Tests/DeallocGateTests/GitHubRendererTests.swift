import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing
import TextEscaping

@Suite struct GitHubRendererTests {
  @Test func messagesEscapePercentAndLineBreaks() {
    #expect(Escaping.workflowData("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b")
  }

  @Test func propertiesAlsoEscapeColonAndComma() {
    #expect(
      Escaping.workflowProperty("Box<Dictionary<String, Int>>: 5%\n")
        == "Box<Dictionary<String%2C Int>>%3A 5%25%0A")
  }

  @Test func annotationCommandHasFileLineAndTitle() {
    let annotation = GitHubRenderer.Annotation(
      level: .error, file: "Sources/Feed/A,B.swift", line: 12, title: "t: x",
      message: "line 1\nline 2")
    #expect(
      annotation.command
        == "::error file=Sources/Feed/A%2CB.swift,line=12,title=t%3A x::line 1%0Aline 2")
    let bare = GitHubRenderer.Annotation(
      level: .warning, file: nil, line: 3, title: "t", message: "m")
    #expect(bare.command == "::warning title=t::m")
  }

  @Test func failingFindingsAreErrorsToleratedOnesAndUnusedSuppressionsWarnings() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl"))
    let annotations = GitHubRenderer().annotations(result)
    #expect(annotations.map(\.level) == [.error, .error, .error, .warning, .warning])
    #expect(annotations[0].title == "dealloctrace check failed")
    #expect(
      annotations[0].message
        == "--max-leaked: 2 leaked objects, 2 over --max-leaked 0, 1 more suppressed\n"
        + "--max-true-leaks: 1 true leak, 1 over --max-true-leaks 0")
    #expect(annotations[1].title.contains("Feed.FeedViewModel"))
    #expect(annotations[2].title.contains("Feed.ImageCache"))
    #expect(annotations[3].title.contains("never released: Feed.NodeCell"))
    let unused = annotations[4]
    #expect(unused.file == "fixtures/gate/suppressions.txt")
    #expect(unused.line == 6)
    #expect(unused.message.hasPrefix("type:Feed.LegacyCache matched no finding"))
    // Suppressed findings get no annotation.
    #expect(
      !annotations.contains {
        $0.title.contains("ImageDecoder") || $0.title.contains("SessionToken")
      })
  }

  @Test func fileAndLineComeFromTheFirstFrameThatHasThemRelativeToTheWorkspace() throws {
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: FixtureSymbolizer())
    let annotations = GitHubRenderer(workspace: "/ci/work/feed").annotations(
      Gate().evaluate(report))
    let viewModel = try #require(annotations.first { $0.title.contains("FeedViewModel") })
    #expect(viewModel.file == "Sources/Feed/FeedScreen.swift")
    #expect(viewModel.line == 0x1b2c3 % 1000 + 1)
    #expect(
      viewModel.command.hasPrefix("::error file=Sources/Feed/FeedScreen.swift,line=300,title="))
    // Without a workspace the path is left as the symbolizer gave it.
    let anywhere = GitHubRenderer().annotations(Gate().evaluate(report))
    #expect(
      anywhere.first { $0.title.contains("FeedViewModel") }?.file
        == "/ci/work/feed/Sources/Feed/FeedScreen.swift")
    // A file outside the checkout cannot be placed: the annotation goes on the run.
    let outside = GitHubRenderer(workspace: "/elsewhere").annotations(Gate().evaluate(report))
    let unplaced = try #require(outside.first { $0.title.contains("FeedViewModel") })
    #expect(unplaced.file == nil)
    #expect(unplaced.line == nil)
    #expect(unplaced.command.hasPrefix("::error title=dealloctrace%3A leaked after release"))
    #expect(unplaced.message.contains("at /ci/work/feed/Sources/Feed/FeedScreen.swift:300"))
  }

  @Test func theAnnotationGoesOnTheFirstCallerFrameInsideTheWorkspace() throws {
    // The SDK's frame comes first and has a file, but in a dependency outside the checkout.
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: DependencySymbolizer())
    let result = Gate().evaluate(report)
    func sdk(_ renderer: GitHubRenderer) -> GitHubRenderer.Annotation? {
      renderer.annotations(result).first { $0.title.contains("SessionToken") }
    }
    let inside = try #require(sdk(GitHubRenderer(workspace: "/ci/work/feed")))
    #expect(inside.file == "Sources/Feed/AppDelegate.swift")
    #expect(inside.line == 0x2a400 % 1000 + 1)
    #expect(sdk(GitHubRenderer())?.file == "/ci/deps/sdk/Session.swift")
  }

  @Test func theQueuesOwnFramesNeverPlaceAnAnnotation() throws {
    // Only the queue's and the tracer's frames have files (a dependency built with debug
    // information, the program without): no caller frame places the finding.
    let report = try GateFixtures.report("leaks.jsonl", symbolizer: MachineryOnlySymbolizer())
    let annotations = GitHubRenderer().annotations(Gate().evaluate(report))
    let viewModel = try #require(annotations.first { $0.title.contains("FeedViewModel") })
    #expect(viewModel.file == nil)
    #expect(!viewModel.command.contains("DeallocQueue.swift"))
  }

  @Test func relativePathsAreResolvedAgainstTheCurrentDirectory() throws {
    let list = try SuppressionList.parse("type:Nothing.*  stale\n", file: "config/leaks.supp")
    let result = Gate(suppressions: list).evaluate(try GateFixtures.report("clean.jsonl"))
    let inApp = GitHubRenderer(workspace: "/ci/work/feed", currentDirectory: "/ci/work/feed/app")
    #expect(inApp.annotations(result).first?.file == "app/config/leaks.supp")
    let atRoot = GitHubRenderer(workspace: "/ci/work/feed/", currentDirectory: "/ci/work/feed")
    #expect(atRoot.annotations(result).first?.file == "config/leaks.supp")
    let elsewhere = GitHubRenderer(workspace: "/ci/work/feed", currentDirectory: "/tmp")
    #expect(elsewhere.annotations(result).first?.file == nil)
    #expect(elsewhere.annotations(result).first?.command.hasPrefix("::warning title=") == true)
  }

  @Test func otherControlCharactersAreShownNotSent() throws {
    let output = GitHubRenderer().render(Gate().evaluate(try GateFixtures.report("hostile.jsonl")))
    #expect(!output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    #expect(!output.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) })
    #expect(output.contains(#"Feed.Bell\u{7}Escape\u{1B}]0;owned\u{7}%2Ckey%3Avalue%250A"#))
    #expect(
      Escaping.workflowData("a\u{1b}[31mb\tc\u{85}d") == #"a\u{1B}[31mb"# + "\tc"
        + #"\u{85}d"#)
  }

  @Test func unusedSuppressionPointsAtItsLineRelativeToTheWorkspace() throws {
    let list = try SuppressionList.parse(
      "type:Nothing.*  stale\n", file: "/ci/work/feed/.dealloctrace-suppressions")
    let result = Gate(suppressions: list).evaluate(try GateFixtures.report("clean.jsonl"))
    let annotations = GitHubRenderer(workspace: "/ci/work/feed/").annotations(result)
    #expect(annotations.count == 1)
    #expect(
      annotations.first?.command
        == "::warning file=.dealloctrace-suppressions,line=1,title=dealloctrace%3A unused"
        + " suppression::type:Nothing.* matched no finding; remove it or fix its pattern"
        + " (reason given: stale)")
  }

  @Test func atMostTenErrorsMostSeriousFirstAndANoticeForTheRest() throws {
    let path = try writeManyLeaksLog(count: 14)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = Gate().evaluate(try DeallocAnalysis.analyze([path]))
    let annotations = GitHubRenderer().annotations(result)
    let errors = annotations.filter { $0.level == .error }
    #expect(errors.count == 10)
    #expect(errors[0].title == "dealloctrace check failed")
    // The three groups of two come first (largest first), then the singles in log order.
    #expect(errors[1...3].allSatisfy { $0.title.contains("(×2) [id:") })
    #expect(errors[1].title.contains("Many.Leaky1 "))
    #expect(errors[9].title.contains("Many.Leaky9 "))
    let notices = annotations.filter { $0.level == .notice }
    #expect(notices.count == 1)
    // 15 errors (verdict + 14 findings), 10 shown.
    #expect(
      notices[0].message.hasPrefix(
        "5 errors not annotated: GitHub shows at most 10 of each kind per step."))
    #expect(annotations.last == notices[0])
  }

  @Test func noAnnotationCanBeInjectedOrBrokenByLogText() throws {
    let result = Gate().evaluate(try GateFixtures.report("hostile.jsonl"))
    let output = GitHubRenderer().render(result)
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 3)  // verdict, leaked Box, true leak
    for line in lines {
      #expect(line.hasPrefix("::error "))
      #expect(!line.contains("\r"))
    }
    // The label's "\r\n::error::injected" stays inside the message.
    #expect(output.contains("Tests.test%0D%0A::error::injected saw"))
    // The type's literal "%0A", ',' and ':' are escaped in the title property.
    #expect(output.contains("key%3Avalue%250A"))
    #expect(output.contains("Swift.String%2C Swift.Int"))
  }

  @Test func passingRunWithoutFindingsPrintsNothing() throws {
    let result = Gate().evaluate(try GateFixtures.report("clean.jsonl"))
    #expect(GitHubRenderer().render(result) == "")
  }

  @Test func goldenAnnotations() throws {
    let result = Gate(suppressions: try GateFixtures.suppressions()).evaluate(
      try GateFixtures.report("leaks.jsonl", symbolizer: FixtureSymbolizer()))
    try GateFixtures.assertGolden(
      GitHubRenderer(workspace: "/ci/work/feed").render(result), "leaks.github.txt")
  }
}

@Suite struct StepSummaryTests {
  @Test func appendsAndKeepsWhatEarlierStepsWrote() throws {
    let scratch = try ScratchDirectory("step-summary")
    let path = scratch.url.appendingPathComponent("step-summary.md").path
    defer { scratch.remove() }
    try StepSummary.append("first\n", to: path)  // creates it
    try StepSummary.append("second\n", to: path)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "first\nsecond\n")
  }

  @Test func unwritablePathIsAnAnalysisError() {
    #expect(throws: AnalysisError.self) {
      try StepSummary.append("x", to: "/nonexistent-dir/summary.md")
    }
  }
}
