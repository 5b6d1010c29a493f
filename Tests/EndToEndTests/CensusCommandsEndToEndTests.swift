import Foundation
import TestSupport
import Testing

/// The census's findings through the CLI (issue 27, issue 36): `explain` by a census
/// finding's id, `--library`, `--max-library-leaks`, and a baseline written and read back by
/// `check`. The log is `fixtures/gate/census.jsonl` (see CensusGateTests).
@Suite struct CensusCommandsEndToEndTests {
  static let log = "fixtures/gate/census.jsonl"

  @Test func explainTakesACensusFindingsIDAndExitsTwoWhenNoneHasIt() throws {
    let run = try CLIRun.run(["explain", Self.log, "id:fb73afc9ad01"])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(
      run.standardOutput.hasPrefix(
        "Census finding id:fb73afc9ad01: ROOT CYCLE of Shop.Order, the program's leak\n"))
    // The old spelling of the id, as the first recorders wrote it, selects it too.
    let old = try CLIRun.run(["explain", Self.log, "id:Lfb73afc9ad01"])
    #expect(old.standardOutput == run.standardOutput)
    let library = try CLIRun.run(["explain", Self.log, "id:00000000c0de", "--library", "Vendor*"])
    #expect(library.standardOutput.contains("a library leak (VendorKit;"))
    let none = try CLIRun.run(["explain", Self.log, "id:123456789abc"])
    #expect(none.status == 2)
    #expect(none.standardOutput.isEmpty)
    #expect(
      none.standardError.split(separator: "\n").count == 1,
      "one line, not \(none.standardError)")
  }

  @Test func libraryModulesAreNotThePrograms() throws {
    let failing = try CLIRun.run(["check", Self.log, "--max-process-leaks", "1"])
    #expect(failing.status == 1, "\(failing.standardOutput)")
    let passing = try CLIRun.run(
      ["check", Self.log, "--max-process-leaks", "1", "--library", "Vendor*"])
    #expect(passing.status == 0, "\(passing.standardOutput)")
    #expect(passing.standardOutput.contains("3 library leaks not counted"))
    let judged = try CLIRun.run(
      [
        "check", Self.log, "--library", "VendorKit", "--library", "Other", "--max-process-leaks",
        "1", "--max-library-leaks", "2",
      ])
    #expect(judged.status == 1)
    #expect(judged.standardOutput.contains("FAIL  --max-library-leaks  3 library leaks (max 2)"))
    let report = try CLIRun.run(["report", Self.log, "--library", "Vendor*"])
    #expect(report.standardOutput.contains("    VendorKit: 2 groups, 2 objects, 64 bytes."))
    let bad = try CLIRun.run(["report", Self.log, "--library", "[a"])
    #expect(bad.status == 2)
  }

  @Test func aWrittenBaselineLetsTheKnownCensusLeaksPass() throws {
    let scratch = try ScratchDirectory("census-baseline")
    defer { scratch.remove() }
    let baseline = scratch.file("baseline.json")
    let written = try CLIRun.run(["check", Self.log, "--write-baseline", baseline])
    #expect(written.status == 0, "\(written.standardOutput)\(written.standardError)")
    let text = try String(contentsOfFile: baseline, encoding: .utf8)
    #expect(text.contains("\"processCycle\""))
    let judged = try CLIRun.run(
      ["check", Self.log, "--baseline", baseline, "--junit", scratch.file("junit.xml")])
    #expect(judged.status == 0, "\(judged.standardOutput)")
    #expect(judged.standardOutput.contains("3 more in the baseline"))
    let junit = try String(contentsOfFile: scratch.file("junit.xml"), encoding: .utf8)
    #expect(junit.contains("classname=\"dealloctrace.processLeak\""))
    let diff = try CLIRun.run(["diff", Self.log, Self.log])
    #expect(diff.status == 0, "\(diff.standardOutput)")
  }
}
