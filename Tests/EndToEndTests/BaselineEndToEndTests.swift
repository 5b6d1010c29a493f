import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// The baseline flow on real traced runs: `BaselineDemo` (a child program whose leaks are
/// chosen by its arguments) runs with `DEALLOCTRACE_LOG`, a first run with two leaks records
/// the baseline, a second run fixes one of them and adds another, and `check --baseline`
/// and `diff` must name exactly the new one and the fixed one.
@Suite struct BaselineEndToEndTests {
  /// A temporary directory with the logs of the two runs, removed at the end.
  final class Runs {
    let directory: URL
    let first: String
    let second: String

    init() throws {
      directory = try ScratchDirectory("baseline").url
      first = directory.appendingPathComponent("first.jsonl").path
      second = directory.appendingPathComponent("second.jsonl").path
      try Self.trace(["session", "cache"], to: first)
      try Self.trace(["cache", "profile"], to: second)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs BaselineDemo with `leaks`, tracing to `log`.
    static func trace(_ leaks: [String], to log: String) throws {
      let executable = CLIRun.executable.deletingLastPathComponent()
        .appendingPathComponent("BaselineDemo")
      try #require(
        FileManager.default.isExecutableFile(atPath: executable.path),
        "\(executable.path) is not built; run `swift build --build-tests` first")
      let run = try ChildProcess(
        executable, leaks,
        environment: ChildEnvironment.inherited(adding: ["DEALLOCTRACE_LOG": log])
      ).run()
      try #require(run.status == 0, "\(run.standardError)")
    }
  }

  /// The `id:` values in `text`, in order.
  func ids(in text: String) -> [String] {
    text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "[" || $0 == "]" })
      .filter { $0.hasPrefix("id:") && $0.count == 15 }.map { String($0.dropFirst(3)) }
  }

  @Test func theGateFailsOnExactlyTheNewLeakAndListsTheFixedOne() throws {
    let runs = try Runs()
    let baseline = runs.path("baseline.json")
    let write = try CLIRun.run(["check", runs.first, "--write-baseline", baseline])
    #expect(write.status == 0, "\(write.standardOutput)\(write.standardError)")
    #expect(write.standardError.contains("wrote 2 findings (2 objects) to the baseline"))
    let recorded = try String(contentsOfFile: baseline, encoding: .utf8)
    #expect(recorded.contains("\"type\": \"BaselineDemo.AuthSession\""))
    #expect(recorded.contains("\"type\": \"BaselineDemo.ImageCacheEntry\""))
    #expect(!recorded.contains("0x"), "no address in a baseline")

    // The same code run again: the same ids, whatever the addresses; the gate passes.
    let rerun = runs.path("rerun.jsonl")
    try Runs.trace(["session", "cache"], to: rerun)
    let same = try CLIRun.run(["check", rerun, "--baseline", baseline])
    #expect(same.status == 0, "\(same.standardOutput)")

    let gate = try CLIRun.run(["check", runs.second, "--baseline", baseline])
    #expect(gate.status == 1)
    let out = gate.standardOutput
    #expect(
      out.contains(
        "FAIL  --max-leaked         1 leaked object, 1 over --max-leaked 0, 1 more in the baseline")
    )
    #expect(
      out.contains(
        "Findings (1)\n\n1. LEAKED AFTER RELEASE: BaselineDemo.ProfileViewModel from BaselineDemo.leakProfile() (×1) [new]"
      ))
    #expect(out.contains("Known (1 finding in the baseline"))
    #expect(
      out.contains(
        "  - leaked after release: BaselineDemo.ImageCacheEntry from BaselineDemo.leakCacheEntry() (×1) id:"
      ))
    #expect(
      out.contains("Fixed (1): in the baseline but no longer found; remove them from \(baseline)"))
    #expect(
      out.contains(
        "leaked after release: BaselineDemo.AuthSession from BaselineDemo.leakSession() (baseline ×1)"
      ))

    // The known leak is printed with the id the baseline recorded for it.
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(recorded.utf8)) as? [String: Any])
    let entries = try #require(object["findings"] as? [[String: Any]])
    let cacheID = try #require(
      entries.first { $0["type"] as? String == "BaselineDemo.ImageCacheEntry" }?["id"] as? String)
    #expect(out.contains("BaselineDemo.leakCacheEntry() (×1) id:\(cacheID)\n"))
    let printed = ids(in: out)
    #expect(printed.count == 3)
    #expect(Set(printed).count == 3)
  }

  @Test func writingANewBaselineWhileGatingOnTheOldOne() throws {
    let runs = try Runs()
    let old = runs.path("old.json")
    let new = runs.path("new.json")
    _ = try CLIRun.run(["check", runs.first, "--write-baseline", old])
    let run = try CLIRun.run(["check", runs.second, "--baseline", old, "--write-baseline", new])
    // Judged against the old baseline: the profile leak is new.
    #expect(run.status == 1)
    #expect(run.standardOutput.contains("[new]"))
    let written = try String(contentsOfFile: new, encoding: .utf8)
    #expect(written.contains("BaselineDemo.ImageCacheEntry"))
    #expect(written.contains("BaselineDemo.ProfileViewModel"))
    #expect(!written.contains("BaselineDemo.AuthSession"))
    // The same findings, recorded again from the same run, write the same bytes.
    let again = runs.path("again.json")
    _ = try CLIRun.run(["check", runs.second, "--write-baseline", again])
    #expect(try String(contentsOfFile: again, encoding: .utf8) == written)
  }

  @Test func junitMarksTheNewLeakFailedAndTheKnownOneSkipped_githubErrorsAndNotices() throws {
    let runs = try Runs()
    let baseline = runs.path("baseline.json")
    _ = try CLIRun.run(["check", runs.first, "--write-baseline", baseline])
    let junit = runs.path("junit.xml")
    let summary = runs.path("summary.md")
    let run = try CLIRun.run(
      ["check", runs.second, "--baseline", baseline, "--junit", junit, "--github"],
      environment: ["GITHUB_STEP_SUMMARY": summary, "GITHUB_WORKSPACE": runs.directory.path])
    #expect(run.status == 1)
    let document = try XMLDocument(contentsOf: URL(fileURLWithPath: junit), options: [])
    let cases = try #require(document.rootElement()?.elements(forName: "testsuite").first)
      .elements(forName: "testcase").filter {
        $0.attribute(forName: "classname")?.stringValue == "dealloctrace.leaked"
      }
    func name(_ element: XMLElement) -> String {
      element.attribute(forName: "name")?.stringValue ?? ""
    }
    let failed = cases.filter { !$0.elements(forName: "failure").isEmpty }.map(name)
    let skipped = cases.filter { !$0.elements(forName: "skipped").isEmpty }.map(name)
    #expect(failed.count == 1 && failed[0].hasPrefix("BaselineDemo.ProfileViewModel from "))
    #expect(skipped.count == 1 && skipped[0].hasPrefix("BaselineDemo.ImageCacheEntry from "))
    #expect(failed[0].contains("[id:") && skipped[0].contains("[id:"))

    let commands = run.standardOutput.split(separator: "\n").filter { $0.hasPrefix("::") }
    let errors = commands.filter { $0.hasPrefix("::error ") }
    #expect(errors.count == 2)
    #expect(errors.last?.contains("ProfileViewModel") == true)
    let notices = commands.filter { $0.hasPrefix("::notice ") }
    #expect(notices.count == 2)
    #expect(notices[0].contains("known%3A leaked after release%3A BaselineDemo.ImageCacheEntry"))
    // The fixed entry points at the baseline file, relative to the workspace.
    #expect(
      notices[1].hasPrefix(
        "::notice file=baseline.json,title=dealloctrace%3A fixed%2C remove from the baseline"))
    let markdown = try String(contentsOfFile: summary, encoding: .utf8)
    #expect(markdown.contains("### New or grown since the baseline (1)"))
    #expect(markdown.contains("### Fixed: remove from the baseline (1)"))
  }

  @Test func diffReportsTheSameNewAndGoneLeaksFromLogsOrASavedReport() throws {
    let runs = try Runs()
    let logs = try CLIRun.run(["diff", runs.first, runs.second])
    #expect(logs.status == 1)
    #expect(
      logs.standardOutput.hasPrefix(
        "dealloctrace diff: 1 new finding, 1 gone, 0 changed in count, 1 unchanged\n"))
    #expect(logs.standardOutput.contains("New in head (1)\n  - id:"))
    #expect(
      logs.standardOutput.contains(
        "leaked after release: BaselineDemo.ProfileViewModel from BaselineDemo.leakProfile() (×1)"))
    #expect(logs.standardOutput.contains("Gone from head (1)\n  - id:"))
    #expect(
      logs.standardOutput.contains(
        "BaselineDemo.AuthSession from BaselineDemo.leakSession() (×1 in base)"))

    // A directory of logs is a side too.
    let directory = runs.directory.appendingPathComponent("base-logs")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: runs.first, toPath: directory.appendingPathComponent("a.jsonl").path)
    let fromDirectory = try CLIRun.run(["diff", directory.path, runs.second])
    #expect(fromDirectory.status == 1)
    #expect(
      fromDirectory.standardOutput.split(separator: "\n").dropFirst(3)
        == logs.standardOutput.split(separator: "\n").dropFirst(3))

    // The base branch's saved JSON report gives the same diff.
    let saved = runs.path("base-report.json")
    let report = try CLIRun.run(["report", runs.first, "--format", "json", "-o", saved])
    #expect(report.status == 0)
    let fromReport = try CLIRun.run(["diff", saved, runs.second, "--format", "json"])
    #expect(fromReport.status == 1)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(fromReport.standardOutput.utf8)) as? [String: Any]
    )
    #expect(object["hasNewFindings"] as? Bool == true)
    let new = try #require(object["new"] as? [[String: Any]])
    let gone = try #require(object["gone"] as? [[String: Any]])
    #expect(new.map { $0["type"] as? String } == ["BaselineDemo.ProfileViewModel"])
    #expect(gone.map { $0["type"] as? String } == ["BaselineDemo.AuthSession"])
    #expect((object["base"] as? [String: Any])?["savedReport"] as? Bool == true)
    #expect(logs.standardOutput.contains("id:\(new[0]["id"] as? String ?? "?")"))

    // No new finding: exit 0, whichever way round the sides are when only fixes happened.
    let fixedOnly = runs.path("fixed-only.jsonl")
    try Runs.trace(["cache"], to: fixedOnly)
    let better = try CLIRun.run(["diff", runs.first, fixedOnly, "--format", "markdown"])
    #expect(better.status == 0, "\(better.standardOutput)\(better.standardError)")
    #expect(better.standardOutput.hasPrefix("## dealloctrace diff: no new findings\n"))
  }

  static let unusableRuns: [([String], String)] = [
    (
      ["check", "fixtures/gate/leaks.jsonl", "--baseline", "fixtures/gate/no-baseline.json"],
      "dealloctrace check: fixtures/gate/no-baseline.json: cannot read the baseline: no such file\n"
    ),
    (
      ["check", "fixtures/gate/leaks.jsonl", "--baseline", "fixtures/gate/leaks.jsonl"],
      "dealloctrace check: fixtures/gate/leaks.jsonl:2: not a dealloctrace baseline: unexpected text after the JSON value\n"
    ),
    (
      ["diff", "fixtures/gate/leaks.jsonl"],
      "dealloctrace diff: diff needs exactly two sides, BASE and HEAD, not 1; see --help\n"
    ),
    (
      ["diff", "fixtures/gate/leaks.jsonl", "fixtures/gate/missing.jsonl"],
      "dealloctrace diff: fixtures/gate/missing.jsonl: no such file or directory\n"
    ),
    (
      ["diff", "fixtures/gate/old-baseline.json", "fixtures/gate/leaks.jsonl"],
      "dealloctrace diff: fixtures/gate/old-baseline.json: not a dealloctrace JSON report: no integer 'reportVersion'\n"
    ),
    (
      ["diff", "fixtures/future-version.jsonl", "fixtures/gate/leaks.jsonl"],
      "dealloctrace diff: fixtures/future-version.jsonl:1: log version 2 is not supported"
    ),
    (
      ["diff", "fixtures/gate/leaks.jsonl", "fixtures/gate/leaks.jsonl", "--format", "html"],
      "dealloctrace diff: unknown format 'html'; use text, markdown, json; see --help\n"
    ),
  ]

  @Test(arguments: unusableRuns)
  func unusableInputExitsTwoWithOneLine(_ arguments: [String], _ message: String) throws {
    let run = try CLIRun.run(arguments)
    #expect(run.status == 2, "\(arguments)")
    #expect(run.standardError.hasPrefix(message), "\(run.standardError)")
    #expect(run.errorLines.count == 1)
  }

  @Test func diffWarnsAboutItsLogsOnStandardErrorAndKeepsItsOutputClean() throws {
    let run = try CLIRun.run(
      [
        "diff", "fixtures/truncated-tail.jsonl", "fixtures/truncated-tail.jsonl", "--format",
        "json",
      ])
    #expect(run.status == 0)
    #expect(
      run.standardError.hasPrefix(
        "dealloctrace: warning: fixtures/truncated-tail.jsonl:6: the last line is cut short"))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
    #expect(object["hasNewFindings"] as? Bool == false)
  }

  @Test func aBaselineFromANewerVersionExitsTwoSayingSo() throws {
    let runs = try Runs()
    let newer = runs.path("newer.json")
    try Data(#"{"baselineVersion": 2, "findings": [], "holders": {}}"#.utf8)
      .write(to: URL(fileURLWithPath: newer))
    let run = try CLIRun.run(["check", runs.first, "--baseline", newer])
    #expect(run.status == 2)
    #expect(
      run.standardError
        == "dealloctrace check: \(newer): baseline version 2 is newer than this dealloctrace"
        + " reads (1); upgrade dealloctrace, or write the baseline again with this one\n")
  }
}
