import Foundation
import TestSupport
import Testing

/// `make demo`'s program, traced with holders as `make demo` runs it, then reported: the
/// README's excerpt is what a new user sees first, so its three stories are checked here.
/// ("WithHolders" in the name: the sanitizer groups skip it, as holders are refused there.)
@Suite struct DemoEndToEndTests {
  /// FeedDemo sits beside the CLI, as every executable of the package does.
  static var demo: URL {
    CLIRun.executable.deletingLastPathComponent().appendingPathComponent("FeedDemo")
  }

  @Test func theDemoWithHoldersShowsALeakALateDeallocAndAFalseLeak() throws {
    let scratch = try ScratchDirectory("demo")
    defer { scratch.remove() }
    let log = scratch.file("feed-demo.jsonl")
    let traced = try ChildProcess(
      Self.demo,
      environment: ChildEnvironment.inherited(adding: [
        "DEALLOCTRACE_LOG": log, "DEALLOCTRACE_HOLDERS": "1",
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

    // The demo leaks on purpose, so its gate fails.
    #expect(try CLIRun.run(["check", log]).status == 1)
  }
}
