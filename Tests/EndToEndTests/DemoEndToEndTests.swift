import Foundation
import TestSupport
import Testing

/// `make demo`'s program, traced with holders and the census as `make demo` runs it, then
/// reported: the README's excerpt is what a new user sees first, so its stories are checked
/// here, the leak only the census finds among them.
/// ("WithHolders" in the name: the sanitizer groups skip it, as holders are refused there.)
@Suite struct DemoEndToEndTests {
  /// FeedDemo sits beside the CLI, as every executable of the package does.
  static var demo: URL {
    CLIRun.executable.deletingLastPathComponent().appendingPathComponent("FeedDemo")
  }

  @Test func theDemoWithHoldersShowsALeakALateDeallocAFalseLeakAndACensusLeak() throws {
    let scratch = try ScratchDirectory("demo")
    defer { scratch.remove() }
    let log = scratch.file("feed-demo.jsonl")
    let traced = try ChildProcess(
      Self.demo,
      environment: ChildEnvironment.inherited(adding: [
        "DEALLOCTRACE_LOG": log, "DEALLOCTRACE_HOLDERS": "1", "DEALLOCTRACE_LEAKS": "1",
      ])
    ).run()
    #expect(traced.status == 0, "\(traced.standardError)")
    #expect(traced.standardOutput.contains("trace written to \(log)"))

    let report = try CLIRun.run(["report", log])
    #expect(report.status == 0, "\(report.standardError)")
    let text = report.standardOutput
    #expect(
      text.contains(
        "LEAKED AFTER RELEASE: FeedDemo.ProfileViewModel from FeedDemo.closeProfileScreen()"),
      "\(text)")
    #expect(
      text.contains("retain cycle: FeedDemo.ProfileViewModel.onUpdate → FeedDemo.ProfileViewModel"))
    #expect(text.contains("Late deallocs: held past their release (1)"))
    #expect(text.contains("global FeedDemo.ThumbnailCache.shared"))
    #expect(text.contains("False leaks: delayed deallocs, not leaks (1)"))
    #expect(
      text.contains(
        "FeedScreenTests.testCloseReleasesDataController saw FeedDemo.DataController alive"))

    // The comment thread's two comments, left behind in a cycle by their freed screen: no
    // queue held them, so only the census finds them, beside the profile's cycle.
    let census = text.components(separatedBy: "Leaks in the whole process (census \"exit\"):")
    #expect(census.count == 2, "no census section: \(text)")
    let section = census.last?.components(separatedBy: "\n\n").first ?? ""
    #expect(section.contains("3 leaks for 168 total leaked bytes"), "\(section)")
    #expect(section.contains("2 (112 bytes) ROOT CYCLE: <FeedDemo.Comment 0x"), "\(section)")
    #expect(
      section.contains("cycle: FeedDemo.Comment.parent → FeedDemo.Comment.reply → FeedDemo.Comment")
        || section.contains(
          "cycle: FeedDemo.Comment.reply → FeedDemo.Comment.parent → FeedDemo.Comment"),
      "\(section)")
    #expect(section.contains("ROOT CYCLE: <FeedDemo.ProfileViewModel 0x"), "\(section)")
    #expect(!text.contains("CommentThreadScreen from"), "the screen itself was freed: \(text)")

    // The demo leaks on purpose, so its gate fails, the census's leaks among the reasons.
    let check = try CLIRun.run(["check", log])
    #expect(check.status == 1)
    #expect(check.standardOutput.contains("FAIL  --max-process-leaks  2 process leaks"))
  }
}
