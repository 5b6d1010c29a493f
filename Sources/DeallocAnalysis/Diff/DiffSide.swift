import DeallocLog
import Foundation

/// One side of `dealloctrace diff`: the findings and false leaks of a run, from its logs or
/// from the JSON report saved by `report --format json`.
///
/// Why a saved report is accepted: a pull request's job can download its base branch's
/// report artifact (a few kilobytes) instead of the base branch's logs (often megabytes),
/// and the base branch's binaries, which `--symbolize` would need, are long gone.
public struct DiffSide: Sendable, Equatable {
  /// One kind of false leak: the leak check (its label) and the type it saw in a queue.
  public struct FalseLeakKey: Sendable, Hashable, Comparable {
    public var label: String
    public var type: String

    public init(label: String, type: String) {
      self.label = label
      self.type = type
    }

    public static func < (lhs: FalseLeakKey, rhs: FalseLeakKey) -> Bool {
      (lhs.label, lhs.type) < (rhs.label, rhs.type)
    }
  }

  /// What was read: the logs, or the saved report's path.
  public var inputs: [String]
  /// Whether the side was a saved JSON report rather than logs.
  public var isSavedReport: Bool
  /// One entry per id (see ``FindingDigest/combined(_:)``).
  public var findings: [FindingDigest]
  /// False leaks by check and type, from the report's listed checks (the first 1000).
  public var falseLeaks: [FalseLeakKey: Int]

  public init(
    inputs: [String], isSavedReport: Bool, findings: [FindingDigest],
    falseLeaks: [FalseLeakKey: Int]
  ) {
    self.inputs = inputs
    self.isSavedReport = isSavedReport
    self.findings = FindingDigest.combined(findings)
    self.falseLeaks = falseLeaks
  }

  /// The side of an analysed run.
  public init(_ report: Report) {
    var falseLeaks: [FalseLeakKey: Int] = [:]
    for verdict in report.falseLeaks {
      falseLeaks[FalseLeakKey(label: verdict.check.label, type: verdict.check.type), default: 0] +=
        1
    }
    self.init(
      inputs: report.inputs, isSavedReport: false,
      findings: report.findings.map(FindingDigest.init)
        + report.census.programGroups.compactMap(FindingDigest.init),
      falseLeaks: falseLeaks)
  }

  /// The side of a saved `report --format json`; `path` names it in errors.
  ///
  /// A finding without an `id` (a report saved before ids existed), or with one of an older
  /// id rule (no `idRule`), gets one computed from its kind, type and `signatureFrames`, as
  /// the analysis would.
  /// - Throws: ``AnalysisError/badSavedReport(path:line:message:)``.
  ///
  /// `libraryModules` (`--library`) moves the saved census findings whose every named type
  /// comes from those modules (or the toolchain's) out of the program's, as for logs.
  public static func parseSavedReport(
    _ text: String, path: String, libraryModules: [Glob] = []
  ) throws(AnalysisError) -> DiffSide {
    let document: JSONValue
    do {
      document = try JSONParser.parse(text)
    } catch {
      throw .badSavedReport(path: path, line: error.line, message: error.message)
    }
    func bad(_ message: String) -> AnalysisError {
      .badSavedReport(path: path, line: nil, message: message)
    }
    guard let version = document["reportVersion"]?.intValue else {
      throw bad("no integer 'reportVersion'")
    }
    guard version <= Int64(JSONRenderer.reportVersion) else {
      throw bad(
        "report version \(version) is newer than this dealloctrace reads"
          + " (\(JSONRenderer.reportVersion)); upgrade dealloctrace")
    }
    guard let findings = document["findings"]?.arrayValue else { throw bad("no 'findings' array") }
    let idRule = document["idRule"]?.intValue ?? 1
    var digests: [FindingDigest] = []
    for (index, finding) in findings.enumerated() {
      digests.append(try savedFinding(finding, at: "findings[\(index)]", idRule: idRule, bad))
    }
    // The final census's program findings (`census.leaks`), by id, kind, root type and cycle.
    for (index, leak) in (document["census"]?["leaks"]?.arrayValue ?? []).enumerated() {
      let group = try savedCensusGroup(leak, at: "census.leaks[\(index)]", bad)
      guard !CensusLibraries.isLibrary(group, modules: libraryModules) else { continue }
      if let digest = FindingDigest(group) { digests.append(digest) }
    }
    var falseLeaks: [FalseLeakKey: Int] = [:]
    for check in document["checks"]?.arrayValue ?? [] {
      let verdict = check["verdict"]?.stringValue.flatMap(CheckVerdict.Verdict.init(rawValue:))
      guard verdict == .falseLeak else { continue }
      let key = FalseLeakKey(
        label: check["label"]?.stringValue ?? "", type: check["type"]?.stringValue ?? "")
      falseLeaks[key, default: 0] += 1
    }
    return DiffSide(inputs: [path], isSavedReport: true, findings: digests, falseLeaks: falseLeaks)
  }

  /// One element of a saved report's `findings`, as a digest; `bad` names what is wrong.
  private static func savedFinding(
    _ finding: JSONValue, at: String, idRule: Int64, _ bad: (String) -> AnalysisError
  ) throws(AnalysisError) -> FindingDigest {
    guard let kindText = finding["kind"]?.stringValue,
      let kind = Finding.Kind(rawValue: kindText)
    else { throw bad("\(at).kind: not a finding kind") }
    guard let type = finding["type"]?.stringValue else {
      throw bad("\(at).type: expected a string")
    }
    guard let count = finding["count"]?.intValue, count >= 0, count <= Int64(Int32.max) else {
      throw bad("\(at).count: expected a count (0 or more)")
    }
    let frames = (finding["signatureFrames"]?.arrayValue ?? []).map(frame)
    var id = FindingID(kind: kind, type: type, symbols: frames.map(FindingID.stableName))
    // A report of an older id rule (no `idRule`) holds that rule's ids: the id computed
    // above from the finding's own fields, by this rule, stands instead.
    if idRule == Int64(FindingID.rule), let text = finding["id"]?.stringValue {
      guard let saved = FindingID(parsing: text) else {
        throw bad("\(at).id: expected \(FindingID.length) hex digits")
      }
      id = saved
    }
    return FindingDigest(
      id: id, kind: kind, type: type, count: Int(count), frames: frames.map(FindingID.stableName))
  }

  /// One element of a saved report's `census.leaks`, as the census group a digest is made
  /// of: its id, kind, instances, member types, edges and root type.
  private static func savedCensusGroup(
    _ leak: JSONValue, at: String, _ bad: (String) -> AnalysisError
  ) throws(AnalysisError) -> CensusGroup {
    guard let idText = leak["id"]?.stringValue, let id = FindingID(parsing: idText) else {
      throw bad("\(at).id: expected \(FindingID.length) hex digits")
    }
    guard let kindText = leak["kind"]?.stringValue,
      let kind = CensusGroup.Kind(rawValue: kindText)
    else { throw bad("\(at).kind: expected cycle or leak") }
    guard let instances = leak["instances"]?.intValue, instances >= 0,
      instances <= Int64(Int32.max)
    else { throw bad("\(at).instances: expected a count (0 or more)") }
    let edges = (leak["edges"]?.arrayValue ?? []).map { edge in
      CensusEdge(type: edge["type"]?.stringValue ?? "?", field: edge["field"]?.stringValue ?? "")
    }
    let members = (leak["members"]?.arrayValue ?? []).map { member in
      CensusTypeCount(type: member["type"]?.stringValue ?? "?", count: 0, bytes: 0)
    }
    let root = leak["tree"]?.arrayValue?.first?["type"]?.stringValue ?? members.first?.type ?? ""
    return CensusGroup(
      id: id.hex, kind: kind, instances: Int(instances), count: 0, bytes: 0, library: false,
      members: members, edges: edges,
      tree: [
        CensusTreeLine(
          depth: 0, type: root, object: nil, size: 0, via: nil, back: false, count: 0, bytes: 0)
      ])
  }

  /// A frame of a saved report (`ip`, `mod`, `off`, `sym`).
  private static func frame(_ value: JSONValue) -> Frame {
    func hex(_ key: String) -> UInt64? {
      guard let text = value[key]?.stringValue, text.hasPrefix("0x") else { return nil }
      return UInt64(text.dropFirst(2), radix: 16)
    }
    return Frame(
      ip: hex("ip") ?? 0, module: value["mod"]?.stringValue, offset: hex("off"),
      symbol: value["sym"]?.stringValue)
  }
}
