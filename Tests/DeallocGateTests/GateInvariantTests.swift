import DeallocAnalysis
import DeallocLog
import Foundation
import GateInvariants
import TestSupport
import Testing

/// The invariants the fuzz target checks, on every fixture and fuzz regression, each log
/// judged with the suppressions written in its own non-record lines and with the gate's
/// fixture suppressions, so that an input the fuzzer once found stays fixed for the gate.
@Suite struct GateInvariantTests {
  static let root = PackageRoot.url

  static var inputs: [String] {
    let manager = FileManager.default
    var paths: [String] = []
    for folder in ["fixtures", "fixtures/gate", "fixtures/fuzz-regressions"] {
      let directory = root.appendingPathComponent(folder)
      let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
      for name in names.sorted() where !name.hasPrefix("README") {
        let path = directory.appendingPathComponent(name).path
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
          paths.append("\(folder)/\(name)")
        }
      }
    }
    return paths
  }

  /// What the fuzz target does with one input.
  static func check(_ data: Data, appending extra: String = "") -> [String] {
    let bytes = data + Data(extra.utf8)
    guard let scratch = try? ScratchDirectory("gate-invariants") else {
      return ["cannot make a scratch directory"]
    }
    let url = scratch.url.appendingPathComponent("input")
    defer { scratch.remove() }
    guard (try? bytes.write(to: url)) != nil else { return ["cannot write \(url.path)"] }
    var reader = LogReader()
    var analyzer = Analyzer()
    try? reader.read(LogInput(path: url.path), into: &analyzer)
    let report = analyzer.finish(inputs: [url.path])
    let (suppressions, problems) = GateInvariants.suppressions(
      in: String(decoding: bytes, as: UTF8.self))
    var violations = problems
    violations += GateInvariants.globViolations(suppressions.suppressions.map(\.glob.pattern))
    for thresholds in [
      GateThresholds(), GateThresholds(maxLeaked: nil, maxStuck: nil, maxTrueLeaks: nil),
      GateThresholds(maxLeaked: 1, maxStuck: 1, maxTrueLeaks: 1, maxNeverReleased: 1),
    ] {
      let result = Gate(thresholds: thresholds, suppressions: suppressions).evaluate(report)
      violations += GateInvariants.violations(result)
    }
    return violations
  }

  @Test func thereAreInputsToReplay() {
    #expect(Self.inputs.count >= 20)
    #expect(Self.inputs.contains("fixtures/fuzz-regressions/binary-garbage.bin"))
  }

  @Test(arguments: inputs)
  func everyInputHoldsTheInvariants(_ path: String) throws {
    let data = try Data(contentsOf: Self.root.appendingPathComponent(path))
    #expect(Self.check(data) == [], "\(path)")
    let suppressions = try String(
      contentsOf: Self.root.appendingPathComponent("fixtures/gate/suppressions.txt"),
      encoding: .utf8)
    #expect(Self.check(data, appending: "\n" + suppressions) == [], "\(path) + suppressions")
  }

  @Test func hostileSuppressionsHoldTheInvariants() throws {
    let log = try Data(contentsOf: Self.root.appendingPathComponent("fixtures/gate/hostile.jsonl"))
    let lines = [
      "type:Feed.Bell*  \u{1b}]0;owned\u{7} reason\r with a carriage return",
      "frame:\"*draw(100%*\"  %0A::error::injected",
      "type:\"Feed.Box<*\r\n",
      "type:*  \u{0}\u{ffff}",
      "frame:[!a]*  unclosed [",
      "type:Foo#x",
    ]
    #expect(Self.check(log, appending: lines.joined(separator: "\n")) == [])
  }

  @Test func theChecksCatchBrokenCounts() throws {
    // The checker itself must be able to fail: a verdict whose counts do not add up.
    let report = try GateFixtures.report("leaks.jsonl")
    var result = Gate().evaluate(report)
    #expect(GateInvariants.violations(result) == [])
    result.thresholds[0].count -= 1
    result.findings.removeLast()
    let violations = GateInvariants.violations(result)
    #expect(violations.contains { $0.hasPrefix("--max-leaked: 2 counted + 0 suppressed") })
    #expect(violations.contains { $0.hasPrefix("the JUnit file has 8 cases") })
    #expect(violations.contains { $0.hasPrefix("the parts of Feed.NodeCell") })
  }

  @Test func globChecksAcceptOrdinaryPatterns() {
    #expect(GateInvariants.globViolations(["a*b", "[x]", "Café", "closure #1", ""]) == [])
  }
}
