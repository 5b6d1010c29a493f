import Foundation
import TestSupport
import Testing

/// A retain/release history through the CLI with `--symbolize` (issue 31 item 2): in a
/// -Onone build every retain in the source is there, so the reference never given back is
/// named down to its statement, the line of `historyKeeper.append(object)`.
@Suite struct RetainHistoryEndToEndTests {
  /// TraceProbe sits beside the CLI, as every executable of the package does.
  static var probe: URL {
    CLIRun.executable.deletingLastPathComponent().appendingPathComponent("TraceProbe")
  }

  @Test func symbolizeNamesTheStatementThatTookTheReference() throws {
    let scratch = try ScratchDirectory("history-e2e")
    defer { scratch.remove() }
    let log = scratch.file("history.jsonl")
    let traced = try ChildProcess(
      Self.probe, ["history"],
      environment: ChildEnvironment.inherited(adding: [
        "DEALLOCTRACE_LOG": log, "DEALLOCTRACE_HOLDERS": "1",
        "DEALLOCTRACE_HISTORY": "TraceProbe.HistoryTarget",
      ])
    ).run()
    #expect(traced.status == 0, "\(traced.standardError)")
    let source = try String(
      contentsOf: PackageRoot.appending("Tests/Children/TraceProbe/HistoryScenario.swift"),
      encoding: .utf8)
    let line =
      try #require(
        source.split(separator: "\n", omittingEmptySubsequences: false)
          .firstIndex { $0.contains("historyKeeper.append(object)") }) + 1
    let report = try CLIRun.run(["report", "--symbolize", log])
    #expect(report.status == 0, "\(report.standardError)")
    let outstanding =
      report.standardOutput.components(separatedBy: "never given back (").dropFirst().first ?? ""
    #expect(
      outstanding.contains(
        "TraceProbe.keepAnExtraReference(Swift.AnyObject) -> () at "),
      "\(report.standardOutput)")
    #expect(
      outstanding.components(separatedBy: "\n").dropFirst(2).first?.hasSuffix(
        "HistoryScenario.swift:\(line)") == true, "\(outstanding)")
  }
}
