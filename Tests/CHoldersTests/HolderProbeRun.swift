import Foundation
import TestSupport
import XCTest

/// Runs HolderProbe, the child of the holder tests, in its debug or release build.
enum HolderProbeRun {
  /// The debug build sits next to the test bundle.
  static var debugURL: URL {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return executable.deletingLastPathComponent().appendingPathComponent("HolderProbe")
  }

  static func debug(
    _ arguments: [String], holders: Bool = true, extraEnvironment: [String: String] = [:]
  ) throws -> ChildRun {
    try run(debugURL, arguments, holders: holders, extraEnvironment: extraEnvironment)
  }

  /// The release build, through `ReleaseBuild` (SwiftPM decides whether it is stale).
  static func release(_ arguments: [String], holders: Bool = true) throws -> ChildRun {
    try run(try ReleaseBuild.executable("HolderProbe"), arguments, holders: holders)
  }

  /// Runs `executable` with holders on (or off): the environment's `DEALLOCTRACE_HOLDERS`
  /// and `CHOLDERS_TEST_NO_SYMTAB` are this run's, not the test process's.
  static func run(
    _ executable: URL, _ arguments: [String], holders: Bool, directory: URL? = nil,
    extraEnvironment: [String: String] = [:], timeout: Duration = .seconds(120)
  ) throws -> ChildRun {
    let run = try ChildProcess(
      executable, arguments,
      environment: ChildEnvironment.inherited(
        clearing: ["CHOLDERS_TEST_NO_SYMTAB"],
        adding: (holders ? ["DEALLOCTRACE_HOLDERS": "1"] : [:]).merging(extraEnvironment) { $1 }),
      directory: directory
    ).run(timeout: timeout)
    if run.timedOut {
      XCTFail("\(executable.lastPathComponent) \(arguments) did not finish within \(timeout)")
    }
    return run
  }
}

/// What HolderProbe printed: its scans' targets and values.
extension ChildRun {
  /// The target addresses the probe printed for its last scan.
  var targets: [String] {
    let line = standardOutput.split(separator: "\n").last { $0.hasPrefix("TARGETS ") }
    return line.map { $0.dropFirst(8).split(separator: " ").map(String.init) } ?? []
  }

  /// Each scan's JSON array, decoded: one HoldersValue (or nil for `null`) per target.
  func scans() throws -> [[HoldersValue?]] {
    try standardOutput.split(separator: "\n").filter { $0.hasPrefix("HOLDERS [") }.map { line in
      let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst(8).utf8))
      let array = try XCTUnwrap(json as? [Any])
      return array.map { ($0 as? [String: Any]).map(HoldersValue.init) }
    }
  }

  /// The integer that follows `prefix` at the start of an output line (or of its text).
  func number(after prefix: String) -> Int? {
    for line in standardOutput.split(separator: "\n") {
      guard let range = line.range(of: prefix) else { continue }
      return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
    return nil
  }

  /// The only value of the only scan.
  func onlyValue() throws -> HoldersValue {
    let scans = try scans()
    XCTAssertEqual(scans.count, 1, standardOutput)
    XCTAssertEqual(scans.first?.count, 1, standardOutput)
    return try XCTUnwrap(scans.first?.first ?? nil, standardOutput)
  }
}

/// One target's HOLDERS-VALUE.
struct HoldersValue: Equatable {
  var raw: [String: Any]

  init(_ raw: [String: Any]) { self.raw = raw }

  static func == (left: HoldersValue, right: HoldersValue) -> Bool {
    NSDictionary(dictionary: left.raw).isEqual(to: right.raw)
  }

  var direct: Int? { raw["direct"] as? Int }
  var more: Int? { raw["more"] as? Int }
  /// Words left out because the strong count was made up without them; 0 when absent.
  var surplus: Int { raw["surplus"] as? Int ?? 0 }
  var paths: [[String: Any]] { raw["paths"] as? [[String: Any]] ?? [] }

  func steps(_ path: Int) -> [[String: Any]] {
    path < paths.count ? paths[path]["steps"] as? [[String: Any]] ?? [] : []
  }

  /// The single path, written as "root → step → step" with types and edges, no addresses.
  func onlyPathShape() throws -> String {
    XCTAssertEqual(paths.count, 1, "\(raw)")
    let path = try XCTUnwrap(paths.first)
    let root = try XCTUnwrap(path["root"] as? [String: Any])
    var parts = [String]()
    switch root["kind"] as? String {
    case "global": parts.append("global \(root["sym"] as? String ?? "?")")
    case let kind?: parts.append(kind)
    case nil: parts.append("?")
    }
    for step in path["steps"] as? [[String: Any]] ?? [] {
      let type = step["type"] as? String ?? "?"
      if let field = step["field"] as? String {
        parts.append("\(type).\(field)")
      } else if let element = step["element"] as? Int, let count = step["count"] as? Int {
        parts.append("\(type)[\(element) of \(count)]")
      } else if let captures = step["captures"] as? [String] {
        parts.append("\(type)(captures \(captures.joined(separator: ", ")))")
      } else {
        parts.append("\(type)+\(step["off"] as? Int ?? -1)")
      }
    }
    return parts.joined(separator: " → ")
  }
}
