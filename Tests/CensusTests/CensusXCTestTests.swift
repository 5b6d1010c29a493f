import DeallocQueue
import DeallocTesting
import Foundation
import TestSupport
import XCTest

/// XCTest's own leaks are library leaks (issue 36): a leak-free XCTest run has no program
/// leak in its exit census, a run that leaks a cycle of its own has exactly that one, and a
/// user object a test case keeps is the program's leak, under XCTest's cycle. Each runs this
/// test bundle itself as the child, with one `CensusXCTestChild` test selected.
final class CensusXCTestTests: XCTestCase {
  private func runChild(_ test: String) throws -> ChildRun {
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let run = try CensusProbeRun.run(
      bundle, ["CensusTests.\(test)"], environment: [CensusXCTestChild.variable: "1"])
    XCTAssertEqual(run.status, 0, run.standardOutput + run.standardError)
    return run
  }

  /// The census's header line, without the pid.
  private func header(_ run: ChildRun) -> String {
    let line = run.standardError.split(separator: "\n").first { $0.hasPrefix("Process ") }
    return line.map { String($0.drop { $0 != ":" }) } ?? "no census: \(run.standardError)"
  }

  func testALeakFreeXCTestRunHasOnlyLibraryLeaks() throws {
    let run = try runChild("CensusXCTestChild/testLeakFree")
    XCTAssertEqual(header(run), ": 0 leaks for 0 total leaked bytes. (census \"exit\")")
    // XCTest on Linux keeps its suites and test cases in cycles: shown apart.
    XCTAssertTrue(run.standardError.contains("Library leaks"), run.standardError)
    XCTAssertTrue(run.standardError.contains("ROOT CYCLE: <XCTest."), run.standardError)
  }

  func testACycleOfTheTestsOwnIsTheOnlyProgramLeak() throws {
    let run = try runChild("CensusXCTestChild/testLeaksACycle")
    XCTAssertEqual(header(run), ": 2 leaks for 48 total leaked bytes. (census \"exit\")")
    let program = run.standardError.components(separatedBy: "Library leaks").first ?? ""
    let roots = program.split(separator: "\n").filter { $0.contains("ROOT ") }
    XCTAssertEqual(roots.count, 1, run.standardError)
    XCTAssertTrue(roots.first?.contains("ROOT CYCLE: <CensusTests.ChildCycleEnd") == true, program)
  }

  func testAUserObjectATestCaseKeepsIsTheProgramsLeak() throws {
    let run = try runChild("CensusXCTestHolderChild/testKeepsAnObject")
    let program = run.standardError.components(separatedBy: "Library leaks").first ?? ""
    // The user's object, under XCTest's own cycle (its holder).
    XCTAssertTrue(program.contains("ROOT CYCLE: <XCTest."), run.standardError)
    XCTAssertTrue(program.contains("kept --> <CensusTests.KeptByTestCase"), run.standardError)
    XCTAssertFalse(header(run).hasPrefix(": 0 leaks"), run.standardError)
  }
}

/// `assertNoLeakedObjects(since:)` in a child run with DEALLOCTRACE_LEAKS=1: it fails with
/// the `leaks` tree of the cycle a test leaked, and passes for a test whose objects all go
/// (one of them through a queue, drained first).
final class NoLeakedObjectsTests: XCTestCase {
  private func runChild(_ test: String) throws -> ChildRun {
    let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return try CensusProbeRun.run(
      bundle, ["CensusTests.\(test)"], environment: [CensusXCTestChild.variable: "1"])
  }

  func testALeakedCycleFailsWithItsTree() throws {
    let run = try runChild("CensusAssertionChild/testLeaksACycle")
    XCTAssertEqual(run.status, 1, run.standardOutput + run.standardError)
    let output = run.standardOutput + run.standardError
    XCTAssertTrue(output.contains("2 leaked objects in the whole process:"), output)
    XCTAssertTrue(output.contains("ROOT CYCLE: <CensusTests.ChildCycleEnd"), output)
    XCTAssertTrue(output.contains("other --> <CensusTests.ChildCycleOther"), output)
  }

  func testNothingLeakedPasses() throws {
    let run = try runChild("CensusAssertionChild/testLeaksNothing")
    XCTAssertEqual(run.status, 0, run.standardOutput + run.standardError)
    XCTAssertTrue(
      run.standardOutput.contains("Executed 1 test, with 0 failures"), run.standardOutput)
  }
}

/// The child side of NoLeakedObjectsTests.
final class CensusAssertionChild: XCTestCase {
  private func skipUnlessChild() throws {
    try XCTSkipUnless(
      ProcessInfo.processInfo.environment[CensusXCTestChild.variable] == "1", "child only")
  }

  func testLeaksACycle() throws {
    try skipUnlessChild()
    let mark = markLeakCensus()
    makeACycle()
    assertNoLeakedObjects(since: mark)
  }

  func testLeaksNothing() throws {
    try skipUnlessChild()
    let mark = markLeakCensus()
    let queue = DeallocQueue(label: "assertion-child", delay: .seconds(3600))
    var object: KeptByTestCase? = KeptByTestCase()
    queue.releaseInBackground(&object)
    XCTAssertEqual([KeptByTestCase(), KeptByTestCase()].count, 2)
    assertNoLeakedObjects(since: mark)
  }

  @inline(never)
  private func makeACycle() {
    let end = ChildCycleEnd()
    let other = ChildCycleOther()
    end.other = other
    other.end = end
  }
}

/// Objects of a cycle a child test makes and drops.
final class ChildCycleEnd {
  var other: ChildCycleOther?
}

final class ChildCycleOther {
  var end: ChildCycleEnd?
}

final class KeptByTestCase {
  var value = 1
}

/// The child's tests: they do something only in the child that CensusXCTestTests starts.
final class CensusXCTestChild: XCTestCase {
  static let variable = "CENSUS_XCTEST_CHILD"

  private func skipUnlessChild() throws {
    try XCTSkipUnless(ProcessInfo.processInfo.environment[Self.variable] == "1", "child only")
  }

  func testLeakFree() throws {
    try skipUnlessChild()
    XCTAssertEqual(KeptByTestCase().value, 1)
  }

  func testLeaksACycle() throws {
    try skipUnlessChild()
    leakACycle()
  }

  @inline(never)
  private func leakACycle() {
    let end = ChildCycleEnd()
    let other = ChildCycleOther()
    end.other = other
    other.end = end
  }
}

/// A test case with a stored property of the user's type, which XCTest keeps alive with
/// the test case.
final class CensusXCTestHolderChild: XCTestCase {
  let kept = KeptByTestCase()

  func testKeepsAnObject() throws {
    try XCTSkipUnless(
      ProcessInfo.processInfo.environment[CensusXCTestChild.variable] == "1", "child only")
    XCTAssertEqual(kept.value, 1)
  }
}
