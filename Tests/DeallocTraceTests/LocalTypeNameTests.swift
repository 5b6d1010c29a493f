import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// A type declared inside a function is named by that function, the same in every run: the
/// runtime's own name carries the address of its context, which moves with ASLR, and every
/// finding id built from it moved too.
final class LocalTypeNameTests: XCTestCase {
  func testTypesDeclaredInAFunctionAreNamedByItTheSameInEveryRun() throws {
    let scratch = try ScratchDirectory("local-types")
    defer { scratch.remove() }
    var runs: [[String]] = []
    var ids: [[String]] = []
    for run in 0..<2 {
      let log = scratch.file("run-\(run).jsonl")
      let child = try ProbeRun.run(["local-types"], environment: ["DEALLOCTRACE_LOG": log])
      XCTAssertEqual(child.status, 0, child.standardError)
      runs.append(try ParsedLog(path: log).kind("enqueue").compactMap { $0["type"] as? String })
      ids.append(try DeallocAnalysis.analyze([log]).findings.map { "\($0.kind) \($0.id)" })
    }
    // The local Order is kept after its release: a finding whose id is the same in both runs.
    XCTAssertEqual(ids[0].count, 1, "\(ids[0])")
    XCTAssertEqual(ids[0], ids[1])
    XCTAssertEqual(
      runs[0],
      [
        "TraceProbe.(Order #1 in TraceProbe.handOverLocalOrder() -> ())",
        "TraceProbe.(Screen #1 in TraceProbe.handOverLocalOrder() -> ()).Cell",
      ])
    XCTAssertEqual(runs[0], runs[1])
  }
}
