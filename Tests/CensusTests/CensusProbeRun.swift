import Foundation
import TestSupport
import XCTest

/// Runs CensusProbe, the child of the census tests, in its debug or release build, with
/// DEALLOCTRACE_LEAKS=1.
enum CensusProbeRun {
  enum Build {
    case debug, release
  }

  /// The package root, from this file's path (Tests/CensusTests/CensusProbeRun.swift).
  static var packageRoot: URL {
    PackageRoot.url
  }

  /// The debug build sits next to the test bundle.
  static var debugURL: URL {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return executable.deletingLastPathComponent().appendingPathComponent("CensusProbe")
  }

  static func run(
    _ build: Build, _ arguments: [String], environment: [String: String] = [:]
  ) throws -> ChildRun {
    let url = build == .debug ? debugURL : try releaseURL()
    return try run(url, arguments, environment: environment)
  }

  /// The release build, built here once into a scratch path of its own (`swift test` holds
  /// the lock of `.build` while tests run, so a nested build there would wait forever);
  /// rebuilt when a source of the probe or of the libraries it links is newer.
  static func releaseURL() throws -> URL {
    let scratch = packageRoot.appendingPathComponent(".build/censusprobe")
    let url = scratch.appendingPathComponent("release/CensusProbe")
    if !FileManager.default.isExecutableFile(atPath: url.path) || isStale(url) {
      let build = try run(
        URL(fileURLWithPath: "/usr/bin/env"),
        [
          "swift", "build", "-c", "release", "--product", "CensusProbe", "--scratch-path",
          scratch.path,
        ],
        environment: [:], leaks: false, directory: packageRoot, timeout: .seconds(1800))
      XCTAssertEqual(build.status, 0, build.standardOutput + build.standardError)
    }
    return url
  }

  /// Whether a source the probe is built from is newer than the built `binary`.
  static func isStale(_ binary: URL) -> Bool {
    let files = FileManager.default
    guard let built = try? files.attributesOfItem(atPath: binary.path)[.modificationDate] as? Date
    else { return true }
    for folder in [
      "Sources/CHolders", "Sources/DeallocTrace", "Sources/DeallocQueue", "Sources/DeallocHooks",
      "Tests/Children/CensusProbe", "Tests/Children/CensusProbeSupport",
    ] {
      let root = packageRoot.appendingPathComponent(folder)
      let enumerator = files.enumerator(
        at: root, includingPropertiesForKeys: [.contentModificationDateKey])
      while let file = enumerator?.nextObject() as? URL {
        let modified = try? file.resourceValues(forKeys: [.contentModificationDateKey])
          .contentModificationDate
        if let modified, modified > built { return true }
      }
    }
    return false
  }

  static func run(
    _ executable: URL, _ arguments: [String], environment: [String: String],
    leaks: Bool = true, directory: URL? = nil, timeout: Duration = .seconds(120)
  ) throws -> ChildRun {
    let run = try ChildProcess(
      executable, arguments,
      environment: ChildEnvironment.inherited(
        clearing: ["CHOLDERS_CENSUS_NO_STOP"],
        adding: (leaks ? ["DEALLOCTRACE_LEAKS": "1"] : [:]).merging(environment) { $1 }),
      directory: directory
    ).run(timeout: timeout)
    if run.timedOut {
      XCTFail("\(executable.lastPathComponent) \(arguments) did not finish within \(timeout)")
    }
    return run
  }
}

/// One census, as the probe printed it (`CENSUS {json}`) or a log's `census` record holds it.
struct CensusValue {
  var raw: [String: Any]

  init(_ raw: [String: Any]) { self.raw = raw }

  /// The last census the probe printed on standard output.
  init(printedBy run: ChildRun) throws {
    let line = try XCTUnwrap(
      run.standardOutput.split(separator: "\n").last { $0.hasPrefix("CENSUS {") },
      "no census printed; stdout: \(run.standardOutput) stderr: \(run.standardError)")
    let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst(7).utf8))
    raw = try XCTUnwrap(json as? [String: Any])
  }

  var groups: [[String: Any]] { raw["groups"] as? [[String: Any]] ?? [] }
  var leaked: Int { raw["leaked"] as? Int ?? -1 }
  var error: String? { raw["error"] as? String }

  /// Each group as `kind: Type×count, Type×count` (members sorted by type), in output order.
  var shapes: [String] {
    groups.map { group in
      let members = (group["members"] as? [[String: Any]] ?? []).map {
        "\($0["type"] as? String ?? "?")×\($0["count"] as? Int ?? -1)"
      }
      return "\(group["kind"] as? String ?? "?"): " + members.joined(separator: ", ")
    }
  }

  /// Each cycle as `Type.field → Type.field` (empty for a ROOT LEAK).
  var cycles: [String] {
    groups.map { group in
      (group["edges"] as? [[String: Any]] ?? []).map { edge in
        let type = edge["type"] as? String ?? "?"
        let field = edge["field"] as? String ?? "?"
        return field.hasPrefix("[") ? type + field : type + "." + field
      }.joined(separator: " → ")
    }
  }

  /// How many live objects of `type` the census counted.
  func liveCount(of type: String) -> Int {
    let live = raw["live"] as? [[String: Any]] ?? []
    return live.first { $0["type"] as? String == type }?["count"] as? Int ?? 0
  }

  /// Delayed objects per queue label.
  var delayedByQueue: [String: Int] {
    var result: [String: Int] = [:]
    for entry in raw["delayed"] as? [[String: Any]] ?? [] {
      result[entry["q"] as? String ?? "?"] = entry["count"] as? Int ?? -1
    }
    return result
  }
}
