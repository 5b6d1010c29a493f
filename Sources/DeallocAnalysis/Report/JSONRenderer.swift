import DeallocLog

/// The report as one JSON object: the stable interface for scripts.
///
/// The shape is documented in `docs/report-format.md`. `summary` holds exactly the twelve
/// integer keys listed there; other members may gain fields, never lose or change them,
/// without raising `reportVersion`. Times are integer nanoseconds (`…Ns`) since the
/// session's start, so nothing is lost to rounding.
public struct JSONRenderer: ReportRenderer {
  /// The version of the JSON report's shape.
  public static let reportVersion = 1

  public init() {}

  public func render(_ report: Report) -> String {
    document(report).serialized(pretty: true) + "\n"
  }

  /// The document as a value, for tools that embed it.
  public func document(_ report: Report) -> JSONValue {
    .object([
      ("reportVersion", .int(Self.reportVersion)),
      ("tool", .string("dealloctrace \(DeallocAnalysis.toolVersion)")),
      ("inputs", .array(report.inputs.map { .string($0) })),
      ("stuckAfterNs", .int(report.options.stuckAfter)),
      ("holdersRecorded", .bool(report.holders.recorded)),
      ("holderScans", .int(report.holders.scans)),
      ("holderScansSkipped", .int(report.holders.skippedScans)),
      ("holderHint", .optional(HolderHint.text(report))),
      ("summary", Self.summary(report.summary)),
      ("findings", .array(report.findings.map(Self.finding))),
      ("lateHeld", .array(report.lateHeld.map(Self.lateHeld))),
      ("omittedLateHeld", .int(report.omittedLateHeld)),
      ("checks", .array(report.checks.map(Self.check))),
      (
        "latency",
        .object([
          ("enqueueToRelease", Self.latency(report.latency.enqueueToRelease)),
          ("releaseToDealloc", Self.latency(report.latency.releaseToDealloc)),
        ])
      ),
      ("peak", report.peak.map(Self.peak) ?? .null),
      ("types", .array(report.types.map(Self.type))),
      ("sessions", .array(report.sessions.map(Self.session))),
      ("omittedSessions", .int(report.omittedSessions)),
      ("warnings", .array(report.warnings.map(Self.warning))),
      ("omittedWarnings", .int(report.omittedWarnings)),
    ])
  }

  static func summary(_ summary: Summary) -> JSONValue {
    .object(summary.fields.map { ($0.key, .int($0.value)) })
  }

  static func frame(_ frame: Frame) -> JSONValue {
    var members: [(String, JSONValue)] = [("ip", .string("0x" + String(frame.ip, radix: 16)))]
    if let module = frame.module { members.append(("mod", .string(module))) }
    if let offset = frame.offset {
      members.append(("off", .string("0x" + String(offset, radix: 16))))
    }
    if let symbol = frame.symbol { members.append(("sym", .string(symbol))) }
    if let file = frame.file { members.append(("file", .string(file))) }
    if let line = frame.line { members.append(("line", .int(line))) }
    return .object(members)
  }

  static func location(_ location: LogLocation) -> JSONValue {
    .object([("file", .string(location.file)), ("line", .int(location.line))])
  }

  static func finding(_ finding: Finding) -> JSONValue {
    .object([
      ("id", .string(finding.id.hex)),
      ("kind", .string(finding.kind.rawValue)),
      ("type", .string(finding.signature.type)),
      ("signature", .string(finding.signature.key)),
      ("title", .string(finding.signature.title)),
      ("count", .int(finding.count)),
      ("explanation", .string(finding.explanation)),
      ("signatureFrames", .array(finding.signature.frames.map(frame))),
      ("stack", .array(finding.stack.map(frame))),
      ("examples", .array(finding.examples.map(example))),
      ("holderKey", .optional(finding.signature.holderKey)),
      ("holders", finding.holders.map(holders) ?? .null),
    ])
  }

  /// A group of late objects held past their release (`docs/report-format.md`, "Late
  /// objects held past their release").
  static func lateHeld(_ group: LateHeldGroup) -> JSONValue {
    .object([
      ("type", .string(group.signature.type)),
      ("signature", .string(group.signature.key)),
      ("title", .string(group.signature.title)),
      ("count", .int(group.count)),
      ("signatureFrames", .array(group.signature.frames.map(frame))),
      ("stack", .array(group.stack.map(frame))),
      ("examples", .array(group.examples.map(lateExample))),
      ("holderKey", .string(group.holders.groupingKey)),
      ("holders", holders(group.holders)),
    ])
  }

  static func lateExample(_ example: LateHeldExample) -> JSONValue {
    .object([
      ("session", .int(example.session)),
      ("id", .int(Int64(truncatingIfNeeded: example.id))),
      ("obj", .string(example.address.description)),
      ("type", .string(example.type)),
      ("queue", .string(example.queue)),
      ("enqueuedNs", .int(example.enqueuedAt)),
      ("releasedNs", .int(example.releasedAt)),
      ("deallocNs", .int(example.deallocAt)),
      ("location", location(example.location)),
      ("holders", holders(example.holders)),
    ])
  }

  /// A holder report (`docs/report-format.md`, "Holders"): the log's HOLDERS-VALUE with the
  /// report's key conventions, plus the text lines every other output shows.
  static func holders(_ report: HolderReport) -> JSONValue {
    .object([
      ("direct", .int(report.direct)),
      ("more", .int(report.more)),
      ("scanUs", report.scanMicroseconds.map { .int($0) } ?? .null),
      ("key", .string(report.groupingKey)),
      ("paths", .array(report.paths.map(holderPath))),
    ])
  }

  static func holderPath(_ path: HolderPath) -> JSONValue {
    let root = path.root
    return .object([
      (
        "root",
        .object([
          ("kind", .string(root.kind.rawValue)),
          ("sym", .optional(root.symbol)),
          ("mod", .optional(root.module)),
          ("off", .optional(root.offset.map { "0x" + String($0, radix: 16) })),
          ("tid", .optional(root.tid)),
        ])
      ),
      ("steps", .array(path.steps.map(holderStep))),
      ("omittedSteps", .int(path.omittedSteps)),
    ])
  }

  static func holderStep(_ step: HolderStep) -> JSONValue {
    var field: String?
    var element: Int?
    var count: Int?
    var captures: [String]?
    switch step.edge {
    case .field(let name): field = name
    case .element(let index, let total):
      element = index
      count = total
    case .captures(let types): captures = types
    case .unnamed: break
    }
    return .object([
      ("type", .string(step.type)),
      ("obj", .optional(step.address?.description)),
      ("off", step.offset.map { .int($0) } ?? .null),
      ("field", .optional(field)),
      ("element", element.map { .int($0) } ?? .null),
      ("count", count.map { .int($0) } ?? .null),
      ("captures", captures.map { .array($0.map { .string($0) }) } ?? .null),
    ])
  }

  static func example(_ example: FindingExample) -> JSONValue {
    .object([
      ("session", .int(example.session)),
      ("id", example.id.map { .int(Int64(truncatingIfNeeded: $0)) } ?? .null),
      ("obj", .string(example.address.description)),
      ("type", .string(example.type)),
      ("queue", .optional(example.queue)),
      ("enqueuedNs", .optional(example.enqueuedAt)),
      ("releasedNs", .optional(example.releasedAt)),
      ("rc", example.retainCount.map { .int($0) } ?? .null),
      ("checkedNs", .optional(example.checkedAt)),
      ("checkLabel", .optional(example.checkLabel)),
      ("ageNs", .optional(example.age)),
      ("location", location(example.location)),
      ("holders", example.holders.map(holders) ?? .null),
    ])
  }

  static func check(_ verdict: CheckVerdict) -> JSONValue {
    .object([
      ("verdict", .string(verdict.verdict.rawValue)),
      ("session", .int(verdict.session)),
      ("tNs", .int(verdict.check.time)),
      ("label", .string(verdict.check.label)),
      ("type", .string(verdict.check.type)),
      ("obj", .string(verdict.check.object.description)),
      ("id", verdict.object.map { .int(Int64(truncatingIfNeeded: $0.id)) } ?? .null),
      ("queue", .optional(verdict.object?.queue)),
      ("enqueuedNs", .optional(verdict.object?.enqueuedAt)),
      ("releasedNs", .optional(verdict.object?.releasedAt)),
      ("state", .optional(verdict.object?.state?.rawValue)),
      ("explanation", .string(verdict.explanation)),
      ("location", location(verdict.location)),
      ("holders", verdict.holders.map(holders) ?? .null),
    ])
  }

  static func latency(_ distribution: LatencyDistribution) -> JSONValue {
    guard let stats = distribution.stats else { return .null }
    return .object([
      ("count", .int(stats.count)),
      ("minNs", .int(stats.min)),
      ("p50Ns", .int(stats.p50)),
      ("p90Ns", .int(stats.p90)),
      ("p99Ns", .int(stats.p99)),
      ("maxNs", .int(stats.max)),
      ("meanNs", .int(stats.mean)),
      ("exact", .bool(distribution.isExact)),
    ])
  }

  static func peak(_ peak: QueuePeak) -> JSONValue {
    .object([
      ("queue", .string(peak.queue)),
      ("session", .int(peak.session)),
      ("depth", .int(peak.depth)),
      ("tNs", .int(peak.at)),
    ])
  }

  static func type(_ row: TypeRow) -> JSONValue {
    .object(
      [("type", .string(row.type)), ("enqueued", .int(row.enqueued))]
        + ObjectState.allCases.map { ($0.rawValue, .int(row[$0])) }
        + [("falseLeaks", .int(row.falseLeaks)), ("trueLeaks", .int(row.trueLeaks))])
  }

  static func session(_ session: SessionReport) -> JSONValue {
    .object([
      ("index", .int(session.index)),
      ("file", .string(session.file)),
      ("line", .int(session.line)),
      ("pid", .optional(session.header.pid)),
      ("exe", .optional(session.header.executable)),
      ("wall", .optional(session.header.wallClock)),
      ("delayMs", session.header.delayMilliseconds.map { .double($0) } ?? .null),
      ("complete", .bool(session.isComplete)),
      ("truncated", .bool(session.truncated)),
      (
        "end",
        session.end.map {
          .object([
            ("why", .string($0.reason)), ("tNs", .int($0.time)), ("pending", .int($0.pending)),
            ("lost", .int($0.lost)),
          ])
        } ?? .null
      ),
      ("lastNs", .int(session.lastTime)),
      ("summary", summary(session.summary)),
      (
        "queues",
        .array(
          session.queues.map {
            .object(
              [
                ("name", .string($0.queue)), ("enqueued", .int($0.enqueued)),
                ("drains", .int($0.drains)),
              ]
                // Only for a queue with a bound (`maxPending`) that was reached.
                + ($0.boundDrains > 0 ? [("boundDrains", .int($0.boundDrains))] : [])
                + [("peakDepth", .int($0.peakDepth)), ("peakNs", .int($0.peakTime))])
          })
      ),
      ("marks", .int(session.marks.count + session.omittedMarks)),
      (
        "unknownKinds",
        .object(session.unknownKinds.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
      ),
      ("malformedLines", .int(session.malformedLines)),
    ])
  }

  static func warning(_ warning: LogWarning) -> JSONValue {
    .object([
      ("kind", .string(warning.kind.rawValue)),
      ("file", .optional(warning.location?.file)),
      ("line", warning.location.map { .int($0.line) } ?? .null),
      ("message", .string(warning.message)),
    ])
  }
}
