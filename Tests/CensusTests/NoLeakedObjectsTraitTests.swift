import Foundation
import TestSupport
import XCTest

/// `.leakTracking(.allObjects)` in child runs of this test bundle's Swift Testing suites
/// (NoLeakedObjectsTraitChildren.swift), with DEALLOCTRACE_LEAKS=1 as a user sets it: a
/// leak-free suite passes and its exit census has no program leak, a leaked cycle fails
/// only the test that made it, named alone, two tests that overlap are both told so, and
/// without the registry the trait says once that it checks less.
final class NoLeakedObjectsTraitTests: XCTestCase {
  private func runChild(
    _ suite: String, leaks: Bool = true, extraArguments: [String] = []
  ) throws -> ChildRun {
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return try CensusProbeRun.run(
      bundle,
      ["--testing-library", "swift-testing", "--filter", "CensusTests.\(suite)"] + extraArguments,
      environment: [TraitChild.variable: "1", "NO_COLOR": "1"], leaks: leaks)
  }

  /// The exit census's header line, without the pid.
  private func header(_ run: ChildRun) -> String {
    let line = run.standardError.split(separator: "\n").first { $0.hasPrefix("Process ") }
    return line.map { String($0.drop { $0 != ":" }) } ?? "no census: \(run.standardError)"
  }

  /// Each issue the child's tests recorded: its first line and the lines that follow it
  /// (Swift Testing prints a comment's lines after `↳`, on standard error as the census).
  private func issues(_ run: ChildRun) -> [String] {
    run.standardError.components(separatedBy: "recorded an issue").dropFirst().map {
      String($0.prefix { $0 != "✘" && $0 != "◇" && $0 != "✔" })
    }
  }

  func testALeakFreeSuitePassesAndTheExitCensusHasNoProgramLeak() throws {
    let run = try runChild("CensusTraitLeakFreeChild")
    XCTAssertEqual(run.status, 0, run.standardOutput + run.standardError)
    XCTAssertTrue(
      run.standardError.contains("Suite CensusTraitLeakFreeChild passed"), run.standardError)
    XCTAssertFalse(run.standardError.contains("leak census"), run.standardError)
    XCTAssertEqual(header(run), ": 0 leaks for 0 total leaked bytes. (census \"exit\")")
  }

  func testALeakedCycleFailsItsTestAloneNamingOnlyThatCycle() throws {
    let scratch = try ScratchDirectory("trait-attachments")
    defer { scratch.remove() }
    let run = try runChild(
      "CensusTraitLeakingChild", extraArguments: ["--attachments-path", scratch.path])
    XCTAssertEqual(run.status, 1, run.standardOutput + run.standardError)
    let output = run.standardError
    XCTAssertEqual(issues(run).count, 1, output)
    let issue = issues(run).first ?? ""
    // The title names the cycle's root and fields (whichever end the census shows first).
    XCTAssertTrue(
      output.contains("Test leaksACycle() recorded an issue"), output)
    XCTAssertNotNil(
      output.range(
        of: #"leaksACycle\(\) recorded an issue at \S+: Caught error: leaked: "#
          + #"CensusTests\.TraitCycle(Head, in a ROOT CYCLE through tail, head|"#
          + #"Tail, in a ROOT CYCLE through head, tail)\n"#,
        options: .regularExpression),
      output)
    XCTAssertTrue(
      issue.contains(
        "leaked: a ROOT CYCLE of CensusTests.TraitCycleHead, CensusTests.TraitCycleTail, "
          + "2 objects (48 bytes)"),
      issue)
    XCTAssertTrue(issue.contains("ROOT CYCLE: <CensusTests.TraitCycle"), issue)
    XCTAssertTrue(
      issue.contains(
        "cycle: CensusTests.TraitCycleHead.tail → CensusTests.TraitCycleTail.head → "
          + "CensusTests.TraitCycleHead")
        || issue.contains(
          "cycle: CensusTests.TraitCycleTail.head → CensusTests.TraitCycleHead.tail → "
            + "CensusTests.TraitCycleTail"),
      issue)
    XCTAssertTrue(issue.contains("made by this test: no other test"), issue)
    XCTAssertTrue(output.contains("Test leaksNothing() passed"), output)
    // The same text, attached to the test.
    let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
    let attachment = try XCTUnwrap(files.first { $0.hasPrefix("leak-TraitCycle") }, "\(files)")
    let text = try String(contentsOfFile: scratch.file(attachment), encoding: .utf8)
    XCTAssertTrue(text.contains("ROOT CYCLE: <CensusTests.TraitCycle"), text)
    // The exit census sees the same cycle, and no other program leak.
    XCTAssertEqual(header(run), ": 2 leaks for 48 total leaked bytes. (census \"exit\")")
  }

  func testTwoTestsThatOverlapAreEachToldOfTheOther() throws {
    let run = try runChild("CensusTraitParallelChild")
    XCTAssertEqual(run.status, 1, run.standardOutput + run.standardError)
    let output = run.standardError
    XCTAssertFalse(output.contains("never came"), output)
    let byTest = Dictionary(
      grouping: output.components(separatedBy: "✘ Test ").dropFirst().filter {
        $0.contains("recorded an issue")
      }
    ) { String($0.prefix { $0 != "(" }) }
    XCTAssertEqual(Set(byTest.keys), ["leaksWhileTheOtherRuns", "runsBesideTheLeak"], output)
    let leaker = byTest["leaksWhileTheOtherRuns"]?.joined() ?? ""
    XCTAssertTrue(leaker.contains("ROOT CYCLE: <CensusTests.TraitCycle"), leaker)
    XCTAssertTrue(
      leaker.contains(
        "made by this test or by one that ran at the same time: "
          + "CensusTests.CensusTraitParallelChild.runsBesideTheLeak()"),
      leaker)
    let beside = byTest["runsBesideTheLeak"]?.joined() ?? ""
    XCTAssertTrue(
      beside.contains(
        "made by this test or by one that ran at the same time: "
          + "CensusTests.CensusTraitParallelChild.leaksWhileTheOtherRuns()"),
      beside)
  }

  func testWithoutTheRegistryTheTraitSaysSoOnce() throws {
    let run = try runChild("CensusTraitLeakingChild", leaks: false)
    XCTAssertEqual(run.status, 0, run.standardOutput + run.standardError)
    let warning =
      ".leakTracking(.allObjects) checks only the watched objects in this run: the leak "
      + "census cannot run: the live-object registry is not on (set DEALLOCTRACE_LEAKS=1"
    XCTAssertEqual(
      run.standardError.components(separatedBy: warning).count - 1, 1, run.standardError)
  }
}
