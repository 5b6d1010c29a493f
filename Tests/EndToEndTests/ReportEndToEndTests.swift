import Foundation
import TestSupport
import Testing

/// `dealloctrace report` and `explain` as a user runs them: exit statuses, formats, standard
/// input, output files and one-line errors with file and line.
@Suite struct ReportEndToEndTests {
  @Test func theTextReportIsTheGoldenOneAndExitsZero() throws {
    let run = try CLIRun.run(["report", "fixtures/feed.jsonl"])
    #expect(run.status == 0)
    #expect(run.standardOutput == (try CLIRun.expected("feed.txt")))
    #expect(run.standardError.isEmpty)
  }

  @Test func theJSONSummaryHasExactlyTheDocumentedKeys() throws {
    let run = try CLIRun.run(["report", "--format", "json", "fixtures/feed.jsonl"])
    #expect(run.status == 0)
    let object =
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
    let summary = try #require(object?["summary"] as? [String: Int])
    #expect(
      Set(summary.keys) == [
        "sessions", "enqueued", "released", "freed", "late", "leaked", "pending", "stuck",
        "neverReleased", "checks", "falseLeaks", "trueLeaks", "trueLeaksOfLeaked",
      ])
    #expect(summary["falseLeaks"] == 1)
    #expect(summary["trueLeaks"] == 2)
    #expect(object?["findings"] is [Any])
    #expect(object?["latency"] is [String: Any])
    #expect(object?["warnings"] is [Any])
  }

  @Test func standardInputIsReadWithDash() throws {
    let log = try Data(contentsOf: CLIRun.root.appendingPathComponent("fixtures/feed.jsonl"))
    let run = try CLIRun.run(["report", "--format=markdown", "-"], input: log)
    #expect(run.status == 0)
    #expect(run.standardOutput.hasPrefix("## dealloctrace report"))
    #expect(run.standardOutput.contains("Not a leak: a delayed dealloc."))
  }

  @Test func directoriesAndSeveralFilesAreOneReport() throws {
    let run = try CLIRun.run([
      "report", "--format", "json", "fixtures/feed.jsonl", "fixtures/several-sessions.jsonl",
    ])
    #expect(run.status == 0)
    let object =
      try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any]
    #expect((object?["summary"] as? [String: Int])?["sessions"] == 3)
  }

  @Test func theOutputFileGetsTheReport() throws {
    let scratch = try ScratchDirectory("report")
    let path = scratch.url.appendingPathComponent("report.md").path
    defer { scratch.remove() }
    let run = try CLIRun.run(["report", "fixtures/feed.jsonl", "--format", "markdown", "-o", path])
    #expect(run.status == 0)
    #expect(run.standardOutput.isEmpty)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == (try CLIRun.expected("feed.md")))
  }

  @Test func malformedLinesAreWarningsWithFileAndLineAndTheReportIsStillMade() throws {
    let run = try CLIRun.run(["report", "--format", "json", "fixtures/garbage-lines.jsonl"])
    #expect(run.status == 0)
    #expect(
      run.errorLines.first
        == "dealloctrace: warning: fixtures/garbage-lines.jsonl:3: malformed line skipped: expected a JSON object at byte 1"
    )
    #expect(run.standardOutput.contains("\"enqueued\": 1"))
  }

  @Test func theStuckThresholdIsAnOption() throws {
    let strict = try CLIRun.run(["report", "--format", "json", "fixtures/stalled-queue.jsonl"])
    let lenient = try CLIRun.run([
      "report", "--format", "json", "--stuck-after", "10s", "fixtures/stalled-queue.jsonl",
    ])
    #expect(strict.standardOutput.contains("\"stuck\": 3"))
    #expect(lenient.standardOutput.contains("\"stuck\": 0"))
    #expect(lenient.standardOutput.contains("\"pending\": 4"))
  }

  @Test(arguments: [
    (
      ["report", "fixtures/future-version.jsonl"],
      "dealloctrace report: fixtures/future-version.jsonl:1: log version 2 is not supported (this dealloctrace reads v1); upgrade dealloctrace"
    ),
    (
      ["report", "fixtures/errors/empty.jsonl"],
      "dealloctrace report: fixtures/errors/empty.jsonl: empty log (no records)"
    ),
    (
      ["report", "fixtures/errors/no-session.jsonl"],
      "dealloctrace report: fixtures/errors/no-session.jsonl: no 'session' record; is this a dealloctrace log?"
    ),
    (
      ["report", "fixtures/missing.jsonl"],
      "dealloctrace report: fixtures/missing.jsonl: no such file or directory"
    ),
    (
      ["report", "fixtures/errors"],
      "dealloctrace report: fixtures/errors/empty.jsonl: empty log (no records)"
    ),
    (
      ["report"],
      "dealloctrace report: no log given; pass files, directories or '-' for standard input"
    ),
    (
      ["report", "fixtures/feed.jsonl", "--bogus"],
      "dealloctrace report: unknown option '--bogus'; see --help"
    ),
    (
      ["report", "fixtures/feed.jsonl", "--format", "pdf"],
      "dealloctrace report: unknown format 'pdf'; use text, json, markdown, html; see --help"
    ),
    (
      ["report", "fixtures/feed.jsonl", "--stuck-after", "soon"],
      "dealloctrace report: invalid duration 'soon'; use a number with a unit: 1s, 250ms, 2.5s, 500us"
    ),
    (
      ["report", "fixtures/feed.jsonl", "--stuck-after"],
      "dealloctrace report: --stuck-after needs a value; see --help"
    ),
    (
      ["report", "fixtures/feed.jsonl", "-o", "/nonexistent/dir/report.txt"],
      "dealloctrace report: /nonexistent/dir/report.txt: cannot write: No such file or directory"
    ),
    (["frobnicate"], "dealloctrace: unknown command 'frobnicate'; see --help"),
    (
      ["explain", "fixtures/feed.jsonl"],
      "dealloctrace explain: explain needs at least one LOG and an ID, 0xADDRESS or TypeName; see --help"
    ),
  ])
  func unusableInputOrUsageIsOneLineAndExitTwo(_ arguments: [String], _ message: String) throws {
    let run = try CLIRun.run(arguments)
    #expect(run.status == 2)
    #expect(run.errorLines == [message])
    #expect(run.standardOutput.isEmpty)
  }

  @Test func arbitraryBytesNeverCrashTheTool() throws {
    var generator = SeededRandom.printed(for: "arbitraryBytesNeverCrashTheTool")
    var bytes = Array((#"{"ev":"session","v":1,"t":0}"# + "\n").utf8)
    bytes += (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let run = try CLIRun.run(["report", "-"], input: Data(bytes))
    #expect(run.status == 0)
    #expect(!run.standardError.contains("Fatal error"))
    #expect(run.standardOutput.contains("dealloctrace report: 1 session"))
  }

  @Test func explainPrintsTheGoldenHistory() throws {
    let run = try CLIRun.run(["explain", "fixtures/feed.jsonl", "1"])
    #expect(run.status == 0)
    #expect(run.standardOutput == (try CLIRun.expected("explain-feed-1.txt")))
    let none = try CLIRun.run(["explain", "fixtures/feed.jsonl", "Nope.Missing"])
    #expect(none.status == 2)
    #expect(none.standardOutput == "")
    #expect(
      none.standardError
        == "dealloctrace explain: no object matches type Nope.Missing in the logs\n")
  }

  /// Every id the outputs print names a finding `explain` can show: with `id:` or without.
  @Test func explainTakesAFindingsID() throws {
    let report = try CLIRun.run(["report", "--format", "json", "fixtures/feed.jsonl"])
    let object = try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8))
    let findings = try #require((object as? [String: Any])?["findings"] as? [[String: Any]])
    #expect(!findings.isEmpty)
    for finding in findings {
      let id = try #require(finding["id"] as? String)
      let type = try #require(finding["type"] as? String)
      let count = try #require(finding["count"] as? Int)
      for query in ["id:" + id, id] where query.contains(where: \.isLetter) {
        let run = try CLIRun.run(["explain", "fixtures/feed.jsonl", query])
        #expect(run.status == 0, "\(query): \(run.standardError)")
        // The fixture's findings have one member each, which the report keeps.
        #expect(count == 1)
        #expect(
          run.standardOutput.hasPrefix("1 object matches finding id:\(id).\n"),
          "\(run.standardOutput)")
        #expect(run.standardOutput.contains("\n\(type) "), "\(run.standardOutput)")
      }
    }
    let unknown = try CLIRun.run(["explain", "fixtures/feed.jsonl", "id:0123456789ab"])
    #expect(unknown.status == 2)
    #expect(
      unknown.standardError
        == "dealloctrace explain: no finding has id:0123456789ab in the logs\n")
  }

  /// An id printed before id rule 2 (here, one of the old golden baseline's) still names its
  /// finding, and the output says the finding's current id. Before, it matched nothing.
  @Test func explainTakesAnIDOfTheFirstRule() throws {
    let log = "fixtures/gate/leaks.jsonl"
    let report = try CLIRun.run(["report", "--format", "json", log])
    let object = try JSONSerialization.jsonObject(with: Data(report.standardOutput.utf8))
    let findings = try #require((object as? [String: Any])?["findings"] as? [[String: Any]])
    let cell = try #require(
      findings.first {
        $0["type"] as? String == "Feed.NodeCell" && $0["kind"] as? String == "neverReleased"
      })
    let current = try #require(cell["id"] as? String)
    let ruleOne = "9b95346e4c17"  // fixtures/gate/rule1-baseline.json's Feed.NodeCell
    #expect(current != ruleOne, "the closure number in its frame changes its id")
    let run = try CLIRun.run(["explain", log, "id:" + ruleOne])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(
      run.standardOutput.contains("matches finding id:\(current).\n"), "\(run.standardOutput)")
  }

  @Test func helpAndVersionExitZero() throws {
    let help = try CLIRun.run(["--help"])
    #expect(help.status == 0)
    #expect(help.standardOutput.contains("report"))
    #expect(help.standardOutput.contains("explain"))
    let reportHelp = try CLIRun.run(["report", "--help"])
    #expect(reportHelp.status == 0)
    #expect(reportHelp.standardOutput.contains("--stuck-after"))
    let version = try CLIRun.run(["--version"])
    #expect(version.standardOutput.hasPrefix("dealloctrace "))
  }
}
