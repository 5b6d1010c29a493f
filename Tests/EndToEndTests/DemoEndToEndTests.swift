import Foundation
import TestSupport
import Testing

/// `make demo`'s program, traced with the settings the Makefile's demo target gives it, then
/// reported: the README's excerpt is what a new user sees first, so its stories are checked
/// here, the leak only the census finds among them with the place it was allocated.
/// ("WithHolders" in the name: the sanitizer groups skip it, as holders are refused there.)
@Suite struct DemoEndToEndTests {
  /// FeedDemo sits beside the CLI, as every executable of the package does.
  static var demo: URL {
    CLIRun.executable.deletingLastPathComponent().appendingPathComponent("FeedDemo")
  }

  /// The `DEALLOCTRACE_*` settings the Makefile's demo recipe gives FeedDemo, but the log's
  /// place: read from the Makefile, so that this test runs what `make demo` runs.
  static func demoSettings() throws -> [String: String] {
    let text = try String(contentsOf: PackageRoot.appending("Makefile"), encoding: .utf8)
    let recipe =
      text.components(separatedBy: "\ndemo:").dropFirst().first?
      .components(separatedBy: "\n\n").first ?? ""
    var settings: [String: String] = [:]
    for word in recipe.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
      let parts = word.split(separator: "=", maxSplits: 1)
      guard parts.count == 2, parts[0].hasPrefix("DEALLOCTRACE_"), parts[0] != "DEALLOCTRACE_LOG"
      else { continue }
      settings[String(parts[0])] = String(parts[1])
    }
    return settings
  }

  @Test func theDemoWithHoldersShowsALeakALateDeallocAFalseLeakAndACensusLeak() throws {
    let scratch = try ScratchDirectory("demo")
    defer { scratch.remove() }
    let log = scratch.file("feed-demo.jsonl")
    let settings = try Self.demoSettings()
    #expect(settings["DEALLOCTRACE_HOLDERS"] == "1", "\(settings)")
    #expect(settings["DEALLOCTRACE_LEAKS"] == "1", "\(settings)")
    let traced = try ChildProcess(
      Self.demo,
      environment: ChildEnvironment.inherited(
        adding: settings.merging(["DEALLOCTRACE_LOG": log]) { _, log in log })
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
    // The survivor's holders record carries its allocation stack: the finding says where the
    // view model was made, below the heading that names where it was enqueued.
    let survivor =
      text.components(separatedBy: "1. LEAKED AFTER RELEASE: FeedDemo.ProfileViewModel").last?
      .components(separatedBy: "\n2. ").first ?? ""
    let survivorAllocation = survivor.components(separatedBy: "allocated at:\n").dropFirst().first
    #expect(
      survivorAllocation?.contains("FeedDemo.ProfileViewModel.__allocating_init()") == true
        || survivorAllocation?.contains("FeedDemo.closeProfileScreen()") == true,
      "no allocation stack for the survivor: \(survivor)")
    // The view model's retain/release history (DEALLOCTRACE_HISTORY): the reference never
    // given back is the one its init's closure took (the cycle), nothing the queue did.
    #expect(settings["DEALLOCTRACE_HISTORY"] == "FeedDemo.ProfileViewModel", "\(settings)")
    let outstanding =
      survivor.components(separatedBy: "never given back (").dropFirst().first?
      .components(separatedBy: "enqueued at:").first ?? ""
    #expect(
      outstanding.hasPrefix("retain/release history: 1 of the "), "no history: \(survivor)")
    #expect(
      outstanding.contains(
        "a retain (count 2 after it), at:\n       FeedDemo.ProfileViewModel.init()"),
      "\(survivor)")
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
    // With the demo's allocation stacks, the comments' group names where they were made: the
    // screen's initializer (or, where the optimizer inlined it, the function that made it).
    let comments = section.components(separatedBy: "ROOT CYCLE: <FeedDemo.Comment 0x").last ?? ""
    let allocated =
      comments.components(separatedBy: "allocated at:\n").dropFirst().first?
      .components(separatedBy: "ROOT CYCLE").first ?? ""
    #expect(
      allocated.contains("FeedDemo.CommentThreadScreen.init()")
        || allocated.contains("FeedDemo.closeCommentThread()"),
      "no allocation stack for the comments: \(section)")

    // The HTML report shows the history as a table, the outstanding row marked; the JSON
    // report carries it paired, with the outstanding references' event numbers.
    let html = try CLIRun.run(["report", "--format", "html", log])
    #expect(html.status == 0, "\(html.standardError)")
    let marked =
      html.standardOutput.components(separatedBy: "<tr class=\"outstanding\">").dropFirst()
    #expect(
      marked.first?.components(separatedBy: "</tr>").first?.contains(
        "<strong>FeedDemo.ProfileViewModel.init() -&gt; FeedDemo.ProfileViewModel</strong>")
        == true, "no outstanding row: \(marked.first ?? "none")")
    let json = try CLIRun.run(["report", "--format", "json", log])
    #expect(json.status == 0, "\(json.standardError)")
    let findings =
      (try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])?[
        "findings"] as? [[String: Any]] ?? []
    let histories = findings.compactMap {
      ($0["holders"] as? [String: Any])?["retainHistory"] as? [String: Any]
    }
    #expect(!histories.isEmpty, "no retainHistory in the JSON report")
    for history in histories {
      let events = history["events"] as? [[String: Any]] ?? []
      let outstanding = history["outstanding"] as? [Int] ?? []
      #expect(outstanding.count == 1, "\(history)")
      let event = outstanding.first.flatMap {
        events.indices.contains($0 - 1) ? events[$0 - 1] : nil
      }
      #expect(event?["op"] as? String == "retain", "\(history)")
      #expect(event?["outstanding"] as? Bool == true, "\(history)")
    }

    // explain shows the whole paired history as a timeline.
    let explain = try CLIRun.run(["explain", log, "FeedDemo.ProfileViewModel"])
    #expect(explain.status == 0, "\(explain.standardError)")
    #expect(
      explain.standardOutput.contains("retain/release history ("), "\(explain.standardOutput)")
    #expect(
      explain.standardOutput.contains(
        "2. retain  (count 2 after it): OUTSTANDING — FeedDemo.ProfileViewModel.init()"),
      "\(explain.standardOutput)")

    // The demo leaks on purpose, so its gate fails, the census's leaks among the reasons.
    let check = try CLIRun.run(["check", log])
    #expect(check.status == 1)
    #expect(check.standardOutput.contains("FAIL  --max-process-leaks  2 process leaks"))
  }
}
