import Foundation
import TestSupport
import Testing

/// Options of `explain`, `diff` and `export` that only the library's tests exercised, run
/// through the CLI: an address as the query, and the stuck threshold.
@Suite struct CommandOptionsEndToEndTests {
  @Test func explainTakesAnAddress() throws {
    let run = try CLIRun.run(["explain", "fixtures/address-reuse.jsonl", "0x7f0000001000"])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardOutput == (try CLIRun.expected("explain-address-reuse-0x7f0000001000.txt")))
  }

  /// The stalled queue's objects are 4–5 s old at the log's end: stuck under the default
  /// threshold (1 s), pending under 10 s.
  @Test func explainUsesTheStuckThreshold() throws {
    let stuck = try CLIRun.run(["explain", "fixtures/stalled-queue.jsonl", "1"])
    let pending = try CLIRun.run(
      ["explain", "fixtures/stalled-queue.jsonl", "1", "--stuck-after", "10s"])
    #expect(stuck.standardOutput.contains("state: stuck"), "\(stuck.standardOutput)")
    #expect(pending.standardOutput.contains("state: pending"), "\(pending.standardOutput)")
  }

  @Test func diffUsesTheStuckThreshold() throws {
    let scratch = try ScratchDirectory("diff-stuck")
    defer { scratch.remove() }
    let log = try String(
      contentsOfFile: "\(CLIRun.root.path)/fixtures/stalled-queue.jsonl", encoding: .utf8)
    let base = scratch.file("base.jsonl")
    try (String(log.prefix { $0 != "\n" }) + "\n").write(
      toFile: base, atomically: true, encoding: .utf8)
    let stuck = try CLIRun.run(["diff", base, "fixtures/stalled-queue.jsonl"])
    let pending = try CLIRun.run(
      ["diff", base, "fixtures/stalled-queue.jsonl", "--stuck-after", "10s"])
    #expect(stuck.status == 1, "\(stuck.standardOutput)")
    #expect(stuck.standardOutput.contains("stuck in queue: Edge.Node (×3)"))
    #expect(pending.status == 0, "\(pending.standardOutput)")
    #expect(pending.standardOutput.contains("0 new findings"), "\(pending.standardOutput)")
  }

  @Test func exportUsesTheStuckThreshold() throws {
    let stuck = try CLIRun.run(["export", "fixtures/stalled-queue.jsonl", "-o", "-"])
    let pending = try CLIRun.run(
      ["export", "fixtures/stalled-queue.jsonl", "--stuck-after", "10s", "-o", "-"])
    #expect(
      stuck.status == 0 && pending.status == 0, "\(stuck.standardError)\(pending.standardError)")
    // Edge.Fresh, 0.2 s old, is pending under both thresholds; the three Edge.Nodes are not.
    #expect(stuck.standardOutput.components(separatedBy: #""state":"stuck""#).count == 4)
    #expect(pending.standardOutput.contains(#""state":"pending""#))
    #expect(!pending.standardOutput.contains(#""state":"stuck""#))
  }
}
