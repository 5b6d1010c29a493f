import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// `dealloctrace check` run as a child process on the gate fixtures: exit statuses,
/// thresholds, suppressions, the JUnit file (parsed), GitHub annotations and the step
/// summary, as a CI job would see them.
@Suite struct CheckCommandTests {
  @Test func withinEveryThresholdExitsZero() throws {
    let run = try CheckRun(["fixtures/gate/clean.jsonl"])
    #expect(run.status == 0)
    #expect(run.standardOutput.hasPrefix("dealloctrace check: passed\n"))
    #expect(run.standardError == "")
  }

  @Test func anExceededThresholdExitsOneAndSaysWhichAndByHowMuch() throws {
    let run = try CheckRun(["fixtures/gate/leaks.jsonl"])
    #expect(run.status == 1)
    let out = run.standardOutput
    #expect(
      out.hasPrefix(
        "dealloctrace check: FAILED (2 thresholds exceeded: --max-leaked, --max-true-leaks)\n"))
    #expect(out.contains("FAIL  --max-leaked         3 leaked objects, 3 over --max-leaked 0\n"))
    #expect(out.contains("FAIL  --max-true-leaks     1 true leak, 1 over --max-true-leaks 0\n"))
    #expect(out.contains("ok    --max-never-released 3 never-released objects (no limit)\n"))
    #expect(
      out.contains("1. LEAKED AFTER RELEASE: Feed.FeedViewModel from FeedScreen.close() (×2)"))
  }

  static let thresholdRuns: [([String], Int32)] = [
    // (arguments, expected status)
    (["fixtures/gate/leaks.jsonl", "--max-leaked", "3", "--max-true-leaks", "1"], 0),
    (["fixtures/gate/leaks.jsonl", "--max-leaked", "2", "--max-true-leaks", "1"], 1),
    (["fixtures/gate/leaks.jsonl", "--max-leaked=unlimited", "--max-true-leaks=unlimited"], 0),
    (["fixtures/gate/leaks.jsonl", "--max-leaked", "3", "--max-true-leaks", "0"], 1),
    (
      [
        "fixtures/gate/leaks.jsonl", "--max-leaked", "3", "--max-true-leaks", "1",
        "--max-never-released", "3",
      ], 0
    ),
    (
      [
        "fixtures/gate/leaks.jsonl", "--max-leaked", "3", "--max-true-leaks", "1",
        "--max-never-released", "2",
      ], 1
    ),
    (["fixtures/gate/stalled.jsonl"], 1),
    (["fixtures/gate/stalled.jsonl", "--max-stuck", "2"], 0),
    (["fixtures/gate/stalled.jsonl", "--stuck-after", "5s"], 0),
    (["fixtures/gate/stalled.jsonl", "--stuck-after", "2999ms"], 1),
  ]

  @Test(arguments: thresholdRuns)
  func eachThresholdDecidesTheExitStatus(_ arguments: [String], _ status: Int32) throws {
    let run = try CheckRun(arguments)
    #expect(run.status == status, "\(arguments): \(run.standardOutput)\(run.standardError)")
  }

  @Test func aCutOffLogIsStillJudgedAndItsWarningGoesToStandardError() throws {
    let run = try CheckRun(["fixtures/truncated-tail.jsonl"])
    #expect(run.status == 0)
    #expect(run.standardOutput.contains("(a session is incomplete)"))
    #expect(
      run.standardError.hasPrefix(
        "dealloctrace: warning: fixtures/truncated-tail.jsonl:6: the last line is cut short"))
  }

  @Test func readsStandardInputLikeReport() throws {
    let log = try Data(
      contentsOf: CheckRun.root.appendingPathComponent("fixtures/gate/leaks.jsonl"))
    let run = try CheckRun(["-", "--max-leaked", "3", "--max-true-leaks", "1"], input: log)
    #expect(run.status == 0)
    #expect(run.standardOutput.contains("read 1 session, 8 objects enqueued"))
  }

  static let unusableRuns: [([String], String)] = [
    (
      ["fixtures/gate/missing.jsonl"],
      "dealloctrace check: fixtures/gate/missing.jsonl: no such file or directory\n"
    ),
    ([], "dealloctrace check: no log given; pass files, directories or '-' for standard input\n"),
    (
      ["fixtures/future-version.jsonl"],
      "dealloctrace check: fixtures/future-version.jsonl:1: log version 2 is not supported"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--max-leaked", "-1"],
      "dealloctrace check: --max-leaked needs a count (0 or more) or 'unlimited', not '-1'; see --help\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--max-stuck", "many"],
      "dealloctrace check: --max-stuck needs a count (0 or more) or 'unlimited', not 'many'; see --help\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--stuck-after", "5"],
      "dealloctrace check: invalid duration '5'"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--max-leak", "1"],
      "dealloctrace check: unknown option '--max-leak'; see --help\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--format", "xml"],
      "dealloctrace check: unknown format 'xml'; use text, json; see --help\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/bad-suppressions.txt"],
      "dealloctrace check: fixtures/gate/bad-suppressions.txt:4: unknown suppression kind 'typo'; use type:GLOB, frame:GLOB or id:HASH\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/none.txt"],
      "dealloctrace check: fixtures/gate/none.txt: cannot read the suppressions: no such file\n"
    ),
    (
      ["fixtures/gate/leaks.jsonl", "--junit", "/nonexistent-dir/junit.xml"],
      "dealloctrace check: /nonexistent-dir/junit.xml: cannot write:"
    ),
  ]

  @Test(arguments: unusableRuns)
  func unusableInputOrUsageExitsTwoWithOneLine(_ arguments: [String], _ message: String) throws {
    let run = try CheckRun(arguments)
    #expect(run.status == 2, "\(arguments)")
    #expect(run.standardError.hasPrefix(message), "\(run.standardError)")
    #expect(run.standardError.split(separator: "\n").count == 1)
  }

  @Test func suppressionsAreShownWithTheirReasonAndUnusedOnesListed() throws {
    let run = try CheckRun([
      "fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/suppressions.txt",
      "--max-leaked", "2", "--max-true-leaks", "1",
    ])
    #expect(run.status == 0, "\(run.standardOutput)")
    let out = run.standardOutput
    #expect(
      out.contains("ok    --max-leaked         2 leaked objects (max 2, 1 more suppressed)\n"))
    #expect(
      out.contains(
        "  - never released: Feed.ImageDecoder from ImageDecoderPool.recycle(Feed.ImageDecoder) (×2)"
          + " id:d09ec6f31253 by type:Feed.ImageDecoder* (fixtures/gate/suppressions.txt:4):"
          + " decoder pool keeps two decoders for the whole run\n"))
    #expect(
      out.contains(
        "Unused suppressions (1): they matched nothing; remove them or fix their pattern\n"
          + "  - fixtures/gate/suppressions.txt:6 type:Feed.LegacyCache (removed in 2.0;"))
  }

  @Test func junitFileParsesWithOneCasePerThresholdAndFinding() throws {
    let directory = try ScratchDirectory("check").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let junit = directory.appendingPathComponent("junit.xml")
    let run = try CheckRun([
      "fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/suppressions.txt",
      "--junit", junit.path,
    ])
    #expect(run.status == 1)
    let document = try XMLDocument(contentsOf: junit, options: [])
    let root = try #require(document.rootElement())
    #expect(root.name == "testsuites")
    let suites = root.elements(forName: "testsuite")
    #expect(suites.count == 1)
    let suite = try #require(suites.first)
    func attribute(_ element: XMLElement, _ name: String) -> String? {
      element.attribute(forName: name)?.stringValue
    }
    #expect(attribute(suite, "name") == "dealloctrace")
    let cases = suite.elements(forName: "testcase")
    #expect(cases.count == 9)
    #expect(attribute(suite, "tests") == "9")
    #expect(attribute(suite, "failures") == "4")
    #expect(attribute(suite, "errors") == "0")
    #expect(attribute(suite, "skipped") == "2")
    let time = try #require(attribute(suite, "time").flatMap(Double.init))
    #expect(time >= 0 && time.isFinite)
    #expect(
      cases.filter { !$0.elements(forName: "failure").isEmpty }.count == 4)
    let classes = cases.compactMap { attribute($0, "classname") }
    #expect(classes.filter { $0 == "dealloctrace.thresholds" }.count == 4)
    #expect(
      Set(classes) == [
        "dealloctrace.thresholds", "dealloctrace.leaked", "dealloctrace.trueLeak",
        "dealloctrace.neverReleased",
      ])
    let leaked = try #require(
      cases.first {
        attribute($0, "name") == "Feed.FeedViewModel from FeedScreen.close() [id:f1d6912aa837]"
      })
    let failure = try #require(leaked.elements(forName: "failure").first)
    #expect(failure.stringValue?.contains("enqueued at:\n  Feed.FeedScreen.close() -> ()") == true)
  }

  @Test func githubAnnotationsAndStepSummaryAppended() throws {
    let directory = try ScratchDirectory("check").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let summary = directory.appendingPathComponent("step-summary.md")
    try Data("## an earlier step\n\n".utf8).write(to: summary)
    let run = try CheckRun(
      [
        "fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/suppressions.txt",
        "--github",
      ],
      environment: ["GITHUB_STEP_SUMMARY": summary.path])
    #expect(run.status == 1)
    let commands = run.standardOutput.split(separator: "\n").filter { $0.hasPrefix("::") }
    #expect(commands.count == 5)
    let verdict =
      "::error title=dealloctrace check failed::--max-leaked: 2 leaked objects, 2 over"
      + " --max-leaked 0, 1 more suppressed%0A--max-true-leaks: 1 true leak, 1 over"
      + " --max-true-leaks 0"
    #expect(commands.first.map(String.init) == verdict)
    #expect(commands.filter { $0.hasPrefix("::error ") }.count == 3)
    #expect(
      commands.last?.hasPrefix(
        "::warning file=fixtures/gate/suppressions.txt,line=6,title=dealloctrace%3A unused suppression::"
      )
        == true)

    let text = try String(contentsOf: summary, encoding: .utf8)
    #expect(text.hasPrefix("## an earlier step\n\n## dealloctrace check: **failed**\n"))
    #expect(text.contains("| `--max-leaked` | 0 | 2 | 1 | **exceeded by 2** |"))
    #expect(text.contains("## dealloctrace report"))
    // A second run appends again rather than replacing.
    _ = try CheckRun(
      ["fixtures/gate/clean.jsonl", "--github"], environment: ["GITHUB_STEP_SUMMARY": summary.path])
    let again = try String(contentsOf: summary, encoding: .utf8)
    #expect(again.hasPrefix(text))
    #expect(again.dropFirst(text.count).hasPrefix("## dealloctrace check: passed\n"))
  }

  @Test(arguments: [["--format", "json"], ["--format", "json", "-o", "-"]])
  func aJSONVerdictOnStandardOutputStaysJSONAndAnnotationsGoToStandardError(
    _ options: [String]
  ) throws {
    let run = try CheckRun(
      ["fixtures/gate/leaks.jsonl", "--suppressions", "fixtures/gate/suppressions.txt", "--github"]
        + options)
    #expect(run.status == 1)
    #expect(!run.standardOutput.contains("::"))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
    #expect(object["passed"] as? Bool == false)
    let commands = run.standardError.split(separator: "\n").filter { $0.hasPrefix("::") }
    #expect(commands.count == 5)
    #expect(commands.first?.hasPrefix("::error title=dealloctrace check failed::") == true)
  }

  @Test func aJUnitFileOnStandardOutputStaysXMLAndAnnotationsGoToStandardError() throws {
    let directory = try ScratchDirectory("check").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let verdict = directory.appendingPathComponent("verdict.txt")
    let run = try CheckRun([
      "fixtures/gate/leaks.jsonl", "--junit", "-", "-o", verdict.path, "--github",
    ])
    #expect(run.status == 1)
    let document = try XMLDocument(data: Data(run.standardOutput.utf8), options: [])
    #expect(document.rootElement()?.name == "testsuites")
    #expect(run.standardError.hasPrefix("::error title=dealloctrace check failed::"))
    #expect(
      try String(contentsOf: verdict, encoding: .utf8).hasPrefix("dealloctrace check: FAILED"))
  }

  @Test(arguments: [["--junit", "-"], ["--junit", "-", "-o", "-"]])
  func theJUnitFileAndTheVerdictCannotShareStandardOutput(_ options: [String]) throws {
    let run = try CheckRun(["fixtures/gate/leaks.jsonl"] + options)
    #expect(run.status == 2)
    #expect(
      run.standardError
        == "dealloctrace check: --junit - and the verdict cannot both go to standard output;"
        + " add -o FILE; see --help\n")
    #expect(run.standardOutput == "")
  }

  @Test func aTextVerdictAndItsAnnotationsShareStandardOutput() throws {
    let run = try CheckRun(["fixtures/gate/leaks.jsonl", "--github"])
    #expect(run.status == 1)
    #expect(run.standardOutput.hasPrefix("dealloctrace check: FAILED"))
    #expect(run.standardOutput.contains("\n::error title=dealloctrace check failed::"))
    #expect(run.standardError == "")
  }

  @Test func withoutGithubTheStepSummaryIsLeftAlone() throws {
    let directory = try ScratchDirectory("check").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let summary = directory.appendingPathComponent("step-summary.md")
    let run = try CheckRun(
      ["fixtures/gate/leaks.jsonl"], environment: ["GITHUB_STEP_SUMMARY": summary.path])
    #expect(run.status == 1)
    #expect(!FileManager.default.fileExists(atPath: summary.path))
    #expect(!run.standardOutput.contains("::error"))
  }

  @Test func jsonVerdictToAFile() throws {
    let directory = try ScratchDirectory("check").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("verdict.json")
    let run = try CheckRun(["fixtures/gate/leaks.jsonl", "--format", "json", "-o", output.path])
    #expect(run.status == 1)
    #expect(run.standardOutput == "")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
    #expect(object["passed"] as? Bool == false)
    let thresholds = try #require(object["thresholds"] as? [[String: Any]])
    #expect(thresholds.compactMap { $0["count"] as? Int } == [3, 0, 1, 3])
  }

  @Test func helpDocumentsTheExitStatuses() throws {
    let run = try CheckRun(["--help"])
    #expect(run.status == 0)
    #expect(run.standardOutput.contains("USAGE: dealloctrace check LOG... [options]"))
    #expect(
      run.standardOutput.contains(
        "EXIT STATUS:\n  0  every threshold held\n  1  a threshold was exceeded\n  2  unusable input"
      ))
    #expect(
      run.standardOutput.contains(
        "or to standard error when\n" + String(repeating: " ", count: 28)
          + "standard output carries JSON or JUnit"))
    let usage = try CheckRun([], command: nil)
    #expect(
      usage.standardOutput.contains("check     Gate CI on leaked, stuck and truly leaking objects"))
  }
}

/// One run of the built `dealloctrace` executable, from the repository root, so that
/// fixture paths and messages are repository-relative.
private struct CheckRun {
  var status: Int32
  var standardOutput: String
  var standardError: String

  static let root = CLIRun.root

  /// Runs `dealloctrace check ARGUMENTS` (or `dealloctrace ARGUMENTS` when `command` is nil).
  init(
    _ arguments: [String], command: String? = "check", input: Data? = nil,
    environment extra: [String: String] = [:]
  ) throws {
    let run = try CLIRun.run(
      (command.map { [$0] } ?? []) + arguments, input: input, environment: extra)
    status = run.status
    standardOutput = run.standardOutput
    standardError = run.standardError
  }
}
