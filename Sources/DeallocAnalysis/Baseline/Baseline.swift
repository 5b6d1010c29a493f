import DeallocLog
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

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
///       "idRule": 2,
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
///
/// `idRule` is the ``FindingID/rule`` the ids were computed by. A file without it was
/// written by rule 1: its entries of the queue's findings are mapped to the current rule
/// from their kind, type and frames (what the rule hashes), so that no such baseline breaks
/// (an entry of this rule that has its frames is hashed again from them too, so that frames
/// recognised as plumbing since it was written leave its id where the finding's went)
/// `check`; its census entries keep their ids, and ``writtenByOldRule`` lets `check` say
/// once that the file should be rewritten when some entry matched nothing.
public struct Baseline: Sendable, Equatable {
  /// The version this tool writes and reads.
  public static let version = 1

  /// One entry per id, in file order.
  public var entries: [FindingDigest]
  /// Where it was read from or will be written to, for messages.
  public var path: String
  /// The ``FindingID/rule`` the file was written with: ``FindingID/rule`` for a baseline
  /// made by this tool.
  public var idRule = FindingID.rule

  /// Whether the file was written by an older id rule, whose entries were mapped.
  public var writtenByOldRule: Bool { idRule < FindingID.rule }

  /// The id an entry had in the file, by the id it was given when read, where the two differ
  /// (an entry mapped from an older rule, or computed again from its frames): a hand-edited
  /// kind is then still caught by the id that was written (``checkKinds(against:census:)``).
  var writtenIDs: [FindingID: FindingID] = [:]

  public init(entries: [FindingDigest], path: String) {
    self.entries = FindingDigest.combined(entries)
    self.path = path
  }

  /// The baseline of what `result` counted: every finding (or part of one) that no
  /// suppression covered, whatever its kind and whether or not it failed a threshold,
  /// since a threshold may be tightened later. Suppressed members stay out: the
  /// suppressions file already sets them aside, with its reasons.
  public init(recording result: GateResult, path: String) {
    let census = (result.processLeaks?.groups ?? []).filter { !$0.isSuppressed }
    self.init(
      entries: result.findings.filter { !$0.isSuppressed }.map { FindingDigest($0.finding) }
        + census.compactMap { FindingDigest($0.group) },
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
      ("idRule", .int(FindingID.rule)),
      (
        "findings",
        .array(entries.map(\.json))
      ),
    ]).serialized(pretty: true) + "\n"
  }

  /// Writes the file, atomically (a temporary file renamed over it). Through a symbolic
  /// link, the file the link points to is replaced and the link is kept: a baseline
  /// committed elsewhere and linked into place stays linked.
  /// - Throws: ``AnalysisError/outputUnwritable(path:reason:)``.
  public func write() throws(AnalysisError) {
    let target: String
    do {
      target = try SymbolicLinks.target(of: path)
    } catch {
      throw .outputUnwritable(path: path, reason: error.reason)
    }
    do {
      try Data(serialized().utf8).write(to: URL(fileURLWithPath: target), options: .atomic)
    } catch {
      throw .outputUnwritable(path: path, reason: (error as NSError).localizedDescription)
    }
  }

  /// Reads the baseline at `path`, which must be a regular file (or a link to one).
  /// - Throws: ``AnalysisError/baselineUnreadable(path:reason:)`` when it is missing, not a
  ///   regular file (`/dev/null`, a FIFO: an empty baseline is no baseline) or unreadable,
  ///   ``AnalysisError/unsupportedBaselineVersion(path:version:supported:)`` when a newer
  ///   dealloctrace wrote it, ``AnalysisError/badBaseline(path:line:message:)`` otherwise.
  public static func load(path: String) throws(AnalysisError) -> Baseline {
    var info = stat()
    guard stat(path, &info) == 0 else {
      let code = errno
      throw .baselineUnreadable(
        path: path, reason: code == ENOENT ? "no such file" : String(cString: strerror(code)))
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      throw .baselineUnreadable(
        path: path,
        reason: "\(fileKind(info.st_mode)), not a regular file: a baseline is the file"
          + " --write-baseline writes")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = access(path, R_OK) == 0 ? "I/O error" : String(cString: strerror(errno))
      throw .baselineUnreadable(path: path, reason: reason)
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
    let idRule = document["idRule"]?.intValue ?? 1
    guard idRule >= 1, idRule <= Int64(FindingID.rule) else {
      throw bad(
        "idRule \(idRule) is not one this dealloctrace knows (1 to \(FindingID.rule));"
          + " upgrade dealloctrace or rewrite the baseline with --write-baseline")
    }
    var entries: [FindingDigest] = []
    var indexByID: [FindingID: Int] = [:]
    var writtenIDs: [FindingID: FindingID] = [:]
    for (index, entry) in findings.enumerated() {
      let at = "findings[\(index)]"
      let digest = try self.entry(entry, at: at, idRule: idRule, bad)
      // --write-baseline writes each id once: a repeat is an edit or a bad merge, and which
      // count was meant cannot be guessed.
      if let first = indexByID[digest.written] {
        throw bad(
          "\(at).id: \(digest.written.hex) is also findings[\(first)]; each id may appear once")
      }
      indexByID[digest.written] = index
      if digest.entry.id != digest.written { writtenIDs[digest.entry.id] = digest.written }
      entries.append(digest.entry)
    }
    var baseline = Baseline(entries: entries, path: path)
    baseline.idRule = Int(idRule)
    baseline.writtenIDs = writtenIDs
    return baseline
  }

  /// One element of a baseline's `findings`: its digest, whose id is computed again from its
  /// fields where they allow (see below), and the id as written.
  private static func entry(
    _ entry: JSONValue, at: String, idRule: Int64, _ bad: (String) -> AnalysisError
  ) throws(AnalysisError) -> (entry: FindingDigest, written: FindingID) {
    guard let idText = entry["id"]?.stringValue, let id = FindingID(parsing: idText) else {
      throw bad("\(at).id: expected \(FindingID.length) hex digits")
    }
    guard let kindText = entry["kind"]?.stringValue,
      let kind = FindingDigest.Kind(rawValue: kindText)
    else {
      throw bad(
        "\(at).kind: expected one of " + FindingDigest.Kind.allRawValues.joined(separator: ", "))
    }
    guard let type = entry["type"]?.stringValue else {
      throw bad("\(at).type: expected a string")
    }
    guard let count = entry["count"]?.intValue, count >= 0, count <= Int64(Int32.max) else {
      throw bad("\(at).count: expected a count (0 or more)")
    }
    let frames = entry["frames"]?.arrayValue?.compactMap(\.stringValue) ?? []
    var digest = FindingDigest(id: id, kind: kind, type: type, count: Int(count), frames: frames)
    if case .finding(let findingKind) = kind, idRule == 1 || entry["frames"] != nil {
      // What rule 1 hashed, less the holder key, is what this rule hashes before it
      // normalises: the entry's own fields give its id by this rule. Computed again for
      // every file, so that a baseline written before a plumbing frame was recognised
      // (release builds' forwarders, async resumptions) or before rule 3 left the test
      // function out still covers its finding. A later rule's entry without frames (edited
      // by hand) keeps its id: rule 2 and 3 differ only in frames it does not have.
      digest.id = FindingID(kind: findingKind, type: type, symbols: frames)
    }
    return (digest, id)
  }

  /// Refuses a baseline whose entry gives an id another kind than the finding with that id
  /// has: the id is a hash of the kind among the rest, so such an entry was edited by hand
  /// and would silently allow (or fail) the wrong finding.
  /// - Throws: ``AnalysisError/badBaseline(path:line:message:)``.
  public func checkKinds(
    against findings: [Finding], census: [CensusGroup] = []
  ) throws(AnalysisError) {
    var kinds: [FindingID: FindingDigest.Kind] = [:]
    for finding in findings { kinds[finding.id] = .finding(finding.kind) }
    for group in census {
      if let id = FindingID(parsing: group.id) { kinds[id] = .process(group.kind) }
    }
    for entry in entries {
      for id in [entry.id] + (writtenIDs[entry.id].map { [$0] } ?? []) {
        guard let kind = kinds[id], kind != entry.kind else { continue }
        throw .badBaseline(
          path: path, line: nil,
          message: "the entry with id \(id.hex) has kind \(entry.kind.rawValue), but the"
            + " finding with that id is \(kind.rawValue); rewrite the entry with --write-baseline")
      }
    }
  }

  /// What a file that is not a regular one is, in words.
  private static func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFDIR: return "a directory"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFIFO: return "a FIFO"
    case S_IFSOCK: return "a socket"
    default: return "a special file"
    }
  }
}
