import DeallocLog
import Foundation

/// The findings a codebase already had when it adopted the gate: `check --baseline FILE`
/// then fails only on findings that are not in it, or whose count grew past it.
///
/// Why ids and counts, not thresholds: `--max-leaked 40` lets leak 41 through when leak 3 is
/// fixed; a baseline names each known leak, so a new one fails even while old ones remain,
/// and a fixed one is listed ("remove from the baseline") so that the file only shrinks.
///
/// The file (version 1) is JSON, pretty-printed, one entry per id, sorted by kind, type and
/// id, with no times, paths or pids, so that rewriting it changes only the lines of
/// findings that changed:
///
///     {
///       "baselineVersion": 1,
///       "findings": [
///         {
///           "id": "3fa2c4e1b0d9",
///           "kind": "leaked",
///           "type": "Feed.FeedViewModel",
///           "count": 2,
///           "frames": ["Feed.FeedScreen.close() -> ()", "Feed.FeedTests.testClose() -> ()"]
///         }
///       ]
///     }
///
/// A reader of version 1 accepts added members; a file of a newer version is refused.
public struct Baseline: Sendable, Equatable {
  /// The version this tool writes and reads.
  public static let version = 1

  /// One entry per id, in file order.
  public var entries: [FindingDigest]
  /// Where it was read from or will be written to, for messages.
  public var path: String

  public init(entries: [FindingDigest], path: String) {
    self.entries = FindingDigest.combined(entries)
    self.path = path
  }

  /// The baseline of what `result` counted: every finding (or part of one) that no
  /// suppression covered, whatever its kind and whether or not it failed a threshold,
  /// since a threshold may be tightened later. Suppressed members stay out: the
  /// suppressions file already sets them aside, with its reasons.
  public init(recording result: GateResult, path: String) {
    self.init(
      entries: result.findings.filter { !$0.isSuppressed }.map { FindingDigest($0.finding) },
      path: path)
  }

  /// The count the baseline allows for `id`, `nil` when it does not know it.
  public func count(of id: FindingID) -> Int? {
    entries.first { $0.id == id }?.count
  }

  /// The file's text.
  public func serialized() -> String {
    JSONValue.object([
      ("baselineVersion", .int(Self.version)),
      (
        "findings",
        .array(entries.map(\.json))
      ),
    ]).serialized(pretty: true) + "\n"
  }

  /// Writes the file.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)``.
  public func write() throws(AnalysisError) {
    do {
      try Data(serialized().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
      throw .outputUnwritable(path: path, reason: (error as NSError).localizedDescription)
    }
  }

  /// Reads the baseline at `path`.
  /// - Throws: ``AnalysisError/baselineUnreadable(path:reason:)`` when it is missing or
  ///   unreadable, ``AnalysisError/unsupportedBaselineVersion(path:version:supported:)`` when a newer
  ///   dealloctrace wrote it, ``AnalysisError/badBaseline(path:line:message:)`` otherwise.
  public static func load(path: String) throws(AnalysisError) -> Baseline {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw .baselineUnreadable(path: path, reason: "no such file")
    }
    guard !isDirectory.boolValue else {
      throw .baselineUnreadable(path: path, reason: "is a directory")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .baselineUnreadable(path: path, reason: "permission denied or I/O error")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw .baselineUnreadable(path: path, reason: "not UTF-8 text")
    }
    return try parse(text, path: path)
  }

  /// Parses a baseline's text; `path` names it in errors.
  public static func parse(_ text: String, path: String) throws(AnalysisError) -> Baseline {
    let document: JSONValue
    do {
      document = try JSONParser.parse(text)
    } catch {
      throw .badBaseline(path: path, line: error.line, message: error.message)
    }
    func bad(_ message: String) -> AnalysisError {
      .badBaseline(path: path, line: nil, message: message)
    }
    guard case .object = document else { throw bad("not a JSON object") }
    guard let version = document["baselineVersion"]?.intValue else {
      throw bad("no integer 'baselineVersion'; is this a dealloctrace baseline?")
    }
    guard version <= Int64(Self.version) else {
      throw .unsupportedBaselineVersion(path: path, version: version, supported: Self.version)
    }
    guard version >= 1 else { throw bad("baselineVersion \(version) does not exist") }
    guard let findings = document["findings"]?.arrayValue else {
      throw bad("no 'findings' array")
    }
    var entries: [FindingDigest] = []
    for (index, entry) in findings.enumerated() {
      let at = "findings[\(index)]"
      guard let idText = entry["id"]?.stringValue, let id = FindingID(parsing: idText) else {
        throw bad("\(at).id: expected \(FindingID.length) hex digits")
      }
      guard let kindText = entry["kind"]?.stringValue, let kind = Finding.Kind(rawValue: kindText)
      else {
        throw bad(
          "\(at).kind: expected one of "
            + Finding.Kind.allCases.map(\.rawValue).joined(separator: ", "))
      }
      guard let type = entry["type"]?.stringValue else {
        throw bad("\(at).type: expected a string")
      }
      guard let count = entry["count"]?.intValue, count >= 0, count <= Int64(Int32.max) else {
        throw bad("\(at).count: expected a count (0 or more)")
      }
      let frames = entry["frames"]?.arrayValue?.compactMap(\.stringValue) ?? []
      entries.append(
        FindingDigest(id: id, kind: kind, type: type, count: Int(count), frames: frames))
    }
    return Baseline(entries: entries, path: path)
  }
}
