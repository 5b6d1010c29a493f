/// The verdict of `dealloctrace check` as one JSON object, for scripts that want more than
/// the exit status.
///
/// Shape (version 1; members may be added, never removed or changed without raising
/// `gateVersion`): `passed`, `thresholds` (name, option, limit or `null`, count, suppressed,
/// exceededBy, passed), `findings` that count (the report's finding shape plus `failing`),
/// `suppressed` (finding plus its suppression: one entry per suppression and finding, so a
/// finding that two suppressions cover in part appears twice, each entry with the count and
/// examples of the members its suppression covers), `unusedSuppressions`, and the report's
/// `summary`. With `--baseline`: each counted finding's `baseline` (`new` or `grown`) and
/// `baselineCount`, each threshold's `known`, and `baseline` (`file`, `known` findings with
/// their `baselineCount`, `fixed` entries in the baseline's own shape); `null` without.
/// When the log held a census: `processLeaks` (`option`, `limit`, `count`, `known`,
/// `library`, `passed`, `error`, and `findings`: each program census finding's `id`, `kind`,
/// `type`, `instances`, `count`, `bytes`, `cycle`, `suppressedBy` and, with a baseline,
/// `baseline` and `baselineCount`); with `--max-library-leaks`, `libraryLeaks` (`limit`,
/// `count`, `passed`, `modules`: `module`, `groups`, `objects`, `bytes`).
public struct GateJSONRenderer: Sendable {
  public static let gateVersion = 1

  public init() {}

  public func render(_ result: GateResult) -> String {
    document(result).serialized(pretty: true) + "\n"
  }

  public func document(_ result: GateResult) -> JSONValue {
    var members = Self.members(result)
    if let process = result.processLeaks { members.append(("processLeaks", Self.process(process))) }
    if let library = result.libraryLeaks { members.append(("libraryLeaks", Self.library(library))) }
    return .object(members)
  }

  static func process(_ process: ProcessLeakResult) -> JSONValue {
    .object([
      ("option", .string("--" + ProcessLeakResult.optionName)),
      ("limit", process.limit.map { .int($0) } ?? .null),
      ("count", .int(process.count)),
      ("known", .int(process.known)),
      ("library", .int(process.library)),
      ("passed", .bool(process.passed)),
      ("error", process.error.map { .string($0) } ?? .null),
      (
        "findings",
        .array(
          process.groups.map { judged in
            var members: [(String, JSONValue)] = [
              ("id", .string(judged.group.id)),
              ("kind", .string(FindingDigest.Kind.process(judged.group.kind).rawValue)),
              ("type", .string(judged.group.rootType)),
              ("instances", .int(judged.group.instances)),
              ("count", .int(judged.group.count)),
              ("bytes", .int(judged.group.bytes)),
              ("cycle", .string(judged.group.cycleText)),
              ("suppressedBy", judged.suppressedBy.map(suppression) ?? .null),
            ]
            switch judged.baseline {
            case nil: break
            case .new: members += [("baseline", .string("new")), ("baselineCount", .null)]
            case .known(let count):
              members += [("baseline", .string("known")), ("baselineCount", .int(count))]
            case .grown(let count):
              members += [("baseline", .string("grown")), ("baselineCount", .int(count))]
            }
            return .object(members)
          })
      ),
    ])
  }

  static func library(_ library: LibraryLeakResult) -> JSONValue {
    .object([
      ("option", .string("--" + LibraryLeakResult.optionName)),
      ("limit", .int(library.limit)),
      ("count", .int(library.count)),
      ("passed", .bool(library.passed)),
      (
        "modules",
        .array(
          library.modules.map { module in
            .object([
              ("module", .string(module.module)), ("groups", .int(module.groups)),
              ("objects", .int(module.objects)), ("bytes", .int(module.bytes)),
            ])
          })
      ),
    ])
  }

  private static func members(_ result: GateResult) -> [(String, JSONValue)] {
    [
      ("gateVersion", .int(Self.gateVersion)),
      ("tool", .string("dealloctrace \(DeallocAnalysis.toolVersion)")),
      ("passed", .bool(result.passed)),
      ("inputs", .array(result.report.inputs.map { .string($0) })),
      ("stuckAfterNs", .int(result.report.options.stuckAfter)),
      ("thresholds", .array(result.thresholds.map(Self.threshold))),
      ("findings", .array(result.counted.map(Self.counted))),
      ("suppressed", .array(result.suppressed.map(Self.suppressed))),
      ("unusedSuppressions", .array(result.unusedSuppressions.map(Self.suppression))),
      ("baseline", Self.baseline(result)),
      ("summary", JSONRenderer.summary(result.report.summary)),
      ("warnings", .int(result.report.warnings.count + result.report.omittedWarnings)),
    ]
  }

  static func threshold(_ t: GateResult.ThresholdResult) -> JSONValue {
    .object([
      ("name", .string(t.threshold.rawValue)),
      ("option", .string("--" + t.threshold.optionName)),
      ("limit", t.limit.map { .int($0) } ?? .null),
      ("count", .int(t.count)),
      ("suppressed", .int(t.suppressed)),
      ("exceededBy", .int(t.exceededBy)),
      ("passed", .bool(t.passed)),
      ("known", .int(t.known)),
    ])
  }

  static func baseline(_ result: GateResult) -> JSONValue {
    guard let baseline = result.baseline else { return .null }
    return .object([
      ("file", .string(baseline.path)),
      ("known", .array(result.known.map(counted))),
      ("fixed", .array(result.fixedBaselineEntries.map(\.json))),
    ])
  }

  static func counted(_ judged: GateResult.JudgedFinding) -> JSONValue {
    guard case .object(var members) = JSONRenderer.finding(judged.finding) else {
      return JSONRenderer.finding(judged.finding)
    }
    members.append(("failing", .bool(judged.failing)))
    switch judged.baseline {
    case nil: break
    case .new: members += [("baseline", .string("new")), ("baselineCount", .null)]
    case .known(let count):
      members += [("baseline", .string("known")), ("baselineCount", .int(count))]
    case .grown(let count):
      members += [("baseline", .string("grown")), ("baselineCount", .int(count))]
    }
    return .object(members)
  }

  static func suppressed(_ judged: GateResult.JudgedFinding) -> JSONValue {
    .object([
      ("finding", JSONRenderer.finding(judged.finding)),
      ("suppression", judged.suppressedBy.map(suppression) ?? .null),
    ])
  }

  static func suppression(_ s: Suppression) -> JSONValue {
    .object([
      ("pattern", .string(s.pattern)),
      ("target", .string(s.target.rawValue)),
      ("glob", .string(s.glob.pattern)),
      ("reason", .string(s.reason)),
      ("file", .string(s.file)),
      ("line", .int(s.line)),
    ])
  }
}
