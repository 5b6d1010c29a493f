import Foundation
import TestSupport
import XCTest

/// The scan's answer as data (`cholders_scan`), read field by field in a HolderProbe child
/// (`answer-edges`): what the recorder copies out before it writes a `holders` record.
final class HolderAnswerTests: XCTestCase {
  /// Each `EDGES …` line of the child, without the prefix.
  private func edges(_ run: ChildRun) -> [String] {
    run.standardOutput.split(separator: "\n").filter { $0.hasPrefix("EDGES ") }.map {
      String($0.dropFirst("EDGES ".count))
    }
  }

  /// `key=value` pairs of one line.
  private func fields(_ line: String) -> [String: Int] {
    var result: [String: Int] = [:]
    for pair in line.split(separator: " ") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      if parts.count == 2, let value = Int(parts[1]) { result[String(parts[0])] = value }
    }
    return result
  }

  func testTargetsThatAreNoLiveObjectsGetAnAnswerEachNoneFound() throws {
    let run = try HolderProbeRun.debug(["answer-edges"])
    XCTAssertEqual(run.status, 0, run.standardError)
    XCTAssertTrue(edges(run).contains("none count=2 found=0,0"), run.standardOutput)
  }

  /// At most `max_paths` paths (none for 0 or less); `more` counts the direct holders left.
  func testPathsAreCappedAndTheRestCounted() throws {
    let run = try HolderProbeRun.debug(["answer-edges"])
    XCTAssertEqual(run.status, 0, run.standardError)
    let capped = edges(run).filter { $0.hasPrefix("capped ") }.map(fields)
    XCTAssertEqual(capped.map { $0["max"] }, [-1, 0, 1, 2], run.standardOutput)
    for line in capped {
      let direct = try XCTUnwrap(line["direct"])
      let expected = max(0, min(try XCTUnwrap(line["max"]), direct))
      XCTAssertGreaterThanOrEqual(direct, 3, "the three sharers")
      XCTAssertEqual(line["paths"], expected)
      XCTAssertEqual(line["more"], direct - expected)
    }
  }

  /// A module path that is no valid UTF-8 reaches the answer as the process's bytes; the
  /// writers replace what is invalid (`testInvalidUTF8InAModulePathBecomesReplacementCharacters`).
  func testAModulePathKeepsItsBytes() throws {
    let folder = try ScratchDirectory("holder-answer-utf8")
    defer {
      _ = try? HolderProbeRun.run(
        URL(fileURLWithPath: "/bin/rm"), ["-rf", folder.path], holders: false)
    }
    let run = try HolderProbeRun.debug(
      ["invalid-utf8-answer"], extraEnvironment: ["HOLDERPROBE_DIR": folder.path])
    XCTAssertEqual(run.status, 0, run.standardError + run.standardOutput)
    let name: [UInt8] = [
      0x78, 0xF4, 0x8F, 0xBF, 0xBF, 0x79, 0xF4, 0x90, 0x80, 0x80, 0x7A, 0xED, 0xA0, 0x80, 0x77,
      0xC0, 0xAF, 0x76, 0xFF, 0x75, 0xE2, 0x82,
    ]
    let path = Array(folder.path.utf8) + [0x2F] + name + Array("/HolderProbe".utf8)
    let hex = path.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    let lines = edges(run)
    XCTAssertTrue(lines.contains("module " + hex), run.standardOutput)
    XCTAssertTrue(lines.contains("symbol HolderProbe.globalHolder steps=1"), run.standardOutput)
  }
}
