import Foundation
import TestSupport
import Testing

/// `dealloctrace report --format html` and `dealloctrace export --format perfetto`, run as a
/// child process: files written whole, standard input and output, one-line errors with exit
/// status 2, and no half-written trace left behind.
@Suite struct VisualCommandTests {
  @Test func reportWritesOneSelfContainedHTMLFile() throws {
    let directory = try ScratchDirectory("visual").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("report.html")
    let run = try CLIRun.run([
      "report", "fixtures/html/demo.jsonl", "--format", "html", "-o", file.path,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput == "")
    let html = try String(contentsOf: file, encoding: .utf8)
    #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
    #expect(html.components(separatedBy: "<svg ").count - 1 == 3)
    #expect(html.contains("class=\"check-marker false-leak\""))
    #expect(!html.contains("src="))
  }

  @Test func reportHTMLGoesToStandardOutputEscaped() throws {
    let run = try CLIRun.run(["report", "--format=html", "fixtures/html/hostile.jsonl"])
    #expect(run.status == 0)
    #expect(run.standardOutput.components(separatedBy: "<script").count - 1 == 1)
    #expect(run.standardOutput.contains("Swift.Array&lt;Evil.Node&gt;"))
  }

  @Test func exportWritesAWholeTraceFile() throws {
    let directory = try ScratchDirectory("visual").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("trace.json")
    let run = try CLIRun.run([
      "export", "--format", "perfetto", "fixtures/perfetto/sessions.jsonl", "-o", file.path,
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput == "")
    let root = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
    let events = try #require(root?["traceEvents"] as? [[String: Any]])
    #expect(events.filter { $0["ph"] as? String == "b" }.count == 7)
    #expect(events.filter { $0["ph"] as? String == "e" }.count == 7)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["trace.json"])
  }

  @Test func exportReadsStandardInputAndWritesStandardOutput() throws {
    let log = try Data(contentsOf: CLIRun.root.appendingPathComponent("fixtures/feed.jsonl"))
    let run = try CLIRun.run(["export", "-"], input: log)
    #expect(run.status == 0, "\(run.standardError)")
    let root = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8))
    let events = try #require((root as? [String: Any])?["traceEvents"] as? [[String: Any]])
    #expect(events.contains { $0["name"] as? String == "false leak: Feed.DataController" })
  }

  static let unusableRuns: [([String], String)] = [
    (
      ["export", "fixtures/missing.jsonl"],
      "dealloctrace export: fixtures/missing.jsonl: no such file or directory\n"
    ),
    (
      ["export", "--format", "chrome", "fixtures/feed.jsonl"],
      "dealloctrace export: unknown format 'chrome'; use perfetto; see --help\n"
    ),
    (
      ["export", "fixtures/future-version.jsonl"],
      "dealloctrace export: fixtures/future-version.jsonl:1: log version 2 is not supported"
    ),
    (
      ["export", "fixtures/feed.jsonl", "-o", "/nonexistent-dir/trace.json"],
      "dealloctrace export: /nonexistent-dir/trace.json: cannot write"
    ),
    (
      ["report", "--format", "htm", "fixtures/feed.jsonl"],
      "dealloctrace report: unknown format 'htm'; use text, json, markdown, html"
    ),
  ]

  @Test(arguments: unusableRuns)
  func unusableInputIsOneLineAndExitTwo(_ arguments: [String], _ message: String) throws {
    let directory = try ScratchDirectory("visual").url
    defer { try? FileManager.default.removeItem(at: directory) }
    let output = directory.appendingPathComponent("out").path
    let run = try CLIRun.run(arguments + (arguments.contains("-o") ? [] : ["-o", output]))
    #expect(run.status == 2)
    #expect(run.standardError.hasPrefix(message), "\(run.standardError)")
    #expect(run.standardError.split(separator: "\n").count == 1)
    #expect(run.standardOutput == "")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
  }

  @Test func helpListsExport() throws {
    let run = try CLIRun.run(["--help"])
    #expect(run.standardOutput.contains("export"))
    let help = try CLIRun.run(["export", "--help"])
    #expect(help.status == 0)
    #expect(help.standardOutput.hasPrefix("USAGE: dealloctrace export LOG..."))
  }
}
