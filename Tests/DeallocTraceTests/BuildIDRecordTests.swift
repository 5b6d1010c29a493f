import Foundation
import TestSupport
import XCTest

/// Each module's GNU build id in the log (`build_id` on the first frame of a session that
/// names the module), equal to what `readelf -n` reads from the file, so that `--symbolize`
/// can tell a rebuilt binary.
final class BuildIDRecordTests: XCTestCase {
  /// `Build ID: …` of `readelf -n path`; nil when readelf is missing.
  private func readelfBuildID(_ path: String) throws -> String? {
    let readelf = ["/usr/bin/readelf", "/usr/bin/llvm-readelf"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    guard let readelf else { return nil }
    let output = try ChildProcess(URL(fileURLWithPath: readelf), ["-n", path]).run()
      .standardOutput
    for line in output.split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 3, parts[0] == "Build", parts[1] == "ID:" { return String(parts[2]) }
    }
    return nil
  }

  /// Every frame of every stack record, per session, in log order.
  private func framesPerSession(_ log: ParsedLog) -> [[[String: Any]]] {
    var sessions: [[[String: Any]]] = []
    for record in log.records {
      switch record["ev"] as? String {
      case "session": sessions.append([])
      case "stack":
        sessions[sessions.count - 1] += record["frames"] as? [[String: Any]] ?? []
      default: break
      }
    }
    return sessions
  }

  func testEachModuleOfASessionCarriesItsBuildIDOnceAndTheProbesIsReadelfs() throws {
    let directory = try scratchDirectory("build-id").url
    let log = directory.appendingPathComponent("explicit.jsonl")
    // Two sessions in one file: each introduces its modules again.
    let run = try ProbeRun.run(["explicit", log.path])
    XCTAssertEqual(run.status, 0, run.standardError)
    let parsed = try ParsedLog(contentsOf: log)
    let sessions = framesPerSession(parsed)
    XCTAssertEqual(sessions.count, 2)
    let probe = ProbeRun.probeURL.resolvingSymlinksInPath().path
    guard let expected = try readelfBuildID(probe) else {
      throw XCTSkip("readelf is missing, or the probe has no build id")
    }
    for frames in sessions {
      var introduced: [String: String] = [:]
      var introducedTwice: Set<String> = []
      var namedBeforeItsBuildID: Set<String> = []
      for frame in frames {
        guard let module = frame["mod"] as? String else { continue }
        if let buildID = frame["build_id"] as? String {
          if introduced.updateValue(buildID, forKey: module) != nil {
            introducedTwice.insert(module)
          }
        } else if introduced[module] == nil {
          namedBeforeItsBuildID.insert(module)
        }
      }
      XCTAssertEqual(introducedTwice, [])
      XCTAssertEqual(namedBeforeItsBuildID, [])
      XCTAssertEqual(introduced[probe], expected, "\(introduced)")
      for (module, buildID) in introduced where FileManager.default.fileExists(atPath: module) {
        XCTAssertEqual(try readelfBuildID(module), buildID, module)
      }
    }
    if let verdict = ContractValidator.verdict(for: log) {
      XCTAssertEqual(verdict.status, 0, verdict.output)
      XCTAssertTrue(verdict.output.contains("0 problems"), verdict.output)
    }
  }
}
