import Foundation
import Testing

/// A baseline written before finding ids had a rule number (rule 1) still gates `check`:
/// its entries are mapped to the current rule, and when some entry matches nothing the CLI
/// says once that the file should be rewritten.
@Suite struct OldRuleBaselineTests {
  /// `rule1-baseline.json` is the baseline rule 1 recorded of `leaks.jsonl` with the
  /// fixture's suppressions (the golden `fixtures/gate/expected/leaks.baseline.json` before
  /// rule 2).
  @Test func aRuleOneBaselineOfTheSameRunStillPasses() throws {
    let run = try CLIRun.run([
      "check", "fixtures/gate/leaks.jsonl", "--baseline", "fixtures/gate/rule1-baseline.json",
      "--suppressions", "fixtures/gate/suppressions.txt",
    ])
    #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
    #expect(!run.standardOutput.contains("Fixed"), "\(run.standardOutput)")
    #expect(!run.standardError.contains("rewrite"), "\(run.standardError)")
  }

  /// `old-baseline.json` (rule 1) has an entry no finding of `leaks.jsonl` matches: the
  /// advice to rewrite the file comes once, on standard error, whatever the count.
  @Test func aRuleOneBaselineWithUnmatchedEntriesIsAdvisedOnceToBeRewritten() throws {
    let run = try CLIRun.run([
      "check", "fixtures/gate/leaks.jsonl", "--baseline", "fixtures/gate/old-baseline.json",
    ])
    #expect(run.status == 1, "\(run.standardOutput)\(run.standardError)")
    let advice = run.standardError.split(separator: "\n").filter { $0.contains("rewrite it") }
    #expect(advice.count == 1, "\(run.standardError)")
    #expect(
      advice.first?.contains(
        "the baseline fixtures/gate/old-baseline.json was written with finding id rule 1") == true)
    #expect(
      advice.first?.hasSuffix(
        "'dealloctrace check LOGS --write-baseline fixtures/gate/old-baseline.json'") == true)
  }

  /// A baseline written now records its rule; checked against itself it gives no advice.
  @Test func aNewBaselineRecordsItsRuleAndNeedsNoAdvice() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-rule-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("baseline.json").path
    let write = try CLIRun.run(["check", "fixtures/gate/leaks.jsonl", "--write-baseline", path])
    #expect(write.status == 0, "\(write.standardError)")
    #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\"idRule\": 3,"))
    let check = try CLIRun.run(["check", "fixtures/gate/leaks.jsonl", "--baseline", path])
    #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    #expect(!check.standardError.contains("rewrite"))
  }
}
