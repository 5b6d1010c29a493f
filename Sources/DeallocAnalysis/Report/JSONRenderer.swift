import DeallocLog

/// The report as one JSON object: the stable interface for scripts.
///
/// The shape is documented in `docs/report-format.md`. `summary` holds exactly the integer
/// keys listed there (a key added to it is listed there first); other members may gain fields, never lose or change them,
/// without raising `reportVersion`. Times are integer nanoseconds (`…Ns`) since the
/// session's start, so nothing is lost to rounding.
public struct JSONRenderer: ReportRenderer {
  /// The version of the JSON report's shape.
  public static let reportVersion = 1

  public init() {}

  public func render(_ report: Report) -> String {
    withBytes(of: report) { String(decoding: $0, as: UTF8.self) }
  }

  /// Written as bytes, without a tree (see ``JSONOutput``), and lent where they lie.
  public func withBytes<Result>(
    of report: Report, _ body: (UnsafeBufferPointer<UInt8>) -> Result
  ) -> Result {
    var out = JSONByteWriter(capacity: Self.capacity(report))
    Self.write(report, to: &out)
    return out.withLine(body)
  }

  /// Room for the whole document, so that a writer's buffer does not grow (a copy and new
  /// pages each time, a fifth of writing a 4 MB report): generous per finding and per check.
  /// Reserved, not touched: pages the document does not reach cost nothing.
  private static func capacity(_ report: Report) -> Int {
    1 << 16 + (report.findings.count + report.lateHeld.count) << 14 + report.checks.count << 11
  }

  /// The document as a value, for tools that embed it.
  public func document(_ report: Report) -> JSONValue {
    var tree = JSONTreeBuilder()
    Self.write(report, to: &tree)
    return tree.value
  }

  /// The report's shape, written once for both outputs: the head, each finding (inside the
  /// array the head opens), the tail.
  static func write<O: JSONOutput>(_ report: Report, to o: inout O) {
    head(report, to: &o)
    for finding in report.findings { Self.finding(finding, to: &o) }
    tail(report, to: &o)
  }

  /// The document up to the findings, whose array it leaves open.
  private static func head<O: JSONOutput>(_ report: Report, to o: inout O) {
    o.beginObject()
    o.field("reportVersion", Self.reportVersion)
    o.field("idRule", FindingID.rule)
    o.field("tool", "dealloctrace \(DeallocAnalysis.toolVersion)")
    o.key("inputs")
    o.array(report.inputs) { $0.string($1) }
    o.field("stuckAfterNs", report.options.stuckAfter)
    o.field("holdersRecorded", report.holders.recorded)
    o.field("holderScans", report.holders.scans)
    o.field("holderScansSkipped", report.holders.skippedScans)
    o.field("holderHint", HolderHint.text(report))
    o.key("summary")
    summary(report.summary, to: &o)
    o.key("findings")
    o.beginArray()
  }

  /// The document from the end of the findings array (which it closes) to its end.
  private static func tail<O: JSONOutput>(_ report: Report, to o: inout O) {
    o.endArray()
    o.key("lateHeld")
    o.array(report.lateHeld) { lateHeld($1, to: &$0) }
    o.field("omittedLateHeld", report.omittedLateHeld)
    o.key("checks")
    o.array(report.checks) { check($1, to: &$0) }
    o.field("latency") { o in
      o.object { o in
        o.key("enqueueToRelease")
        latency(report.latency.enqueueToRelease, to: &o)
        o.key("releaseToDealloc")
        latency(report.latency.releaseToDealloc, to: &o)
      }
    }
    o.key("peak")
    if let peak = report.peak { Self.peak(peak, to: &o) } else { o.null() }
    o.key("types")
    o.array(report.types) { type($1, to: &$0) }
    o.key("sessions")
    o.array(report.sessions) { session($1, to: &$0) }
    o.field("omittedSessions", report.omittedSessions)
    o.key("warnings")
    o.array(report.warnings) { warning($1, to: &$0) }
    o.field("omittedWarnings", report.omittedWarnings)
    if !report.census.isEmpty {
      o.key("census")
      CensusJSON.write(report.census, to: &o)
    }
    o.endObject()
  }

  /// A tree of what `write` writes, for other documents that embed a part.
  private static func tree(_ write: (inout JSONTreeBuilder) -> Void) -> JSONValue {
    var tree = JSONTreeBuilder()
    write(&tree)
    return tree.value
  }

  static func summary(_ summary: Summary) -> JSONValue { tree { Self.summary(summary, to: &$0) } }

  static func summary<O: JSONOutput>(_ summary: Summary, to o: inout O) {
    o.object { o in
      for (key, value) in summary.fields {
        o.key(named: key)
        o.int(value)
      }
    }
  }

  static func frame<O: JSONOutput>(_ frame: Frame, to o: inout O) {
    o.object { o in
      o.hexField("ip", frame.ip)
      if let module = frame.module { o.field("mod", module) }
      if let offset = frame.offset { o.hexField("off", offset) }
      if let symbol = frame.symbol { o.field("sym", symbol) }
      if let file = frame.file { o.field("file", file) }
      if let line = frame.line { o.field("line", line) }
      // What the text outputs fold this frame into, so that a reader of the JSON can list
      // the program's frames the same way; `sym` stays as the log had it (ids hash it).
      if let category = StackListing.category(frame) { o.field("plumbing", category.name) }
    }
  }

  static func location<O: JSONOutput>(_ location: LogLocation, to o: inout O) {
    o.object { o in
      o.field("file", location.file)
      o.field("line", location.line)
    }
  }

  static func finding(_ finding: Finding) -> JSONValue { tree { Self.finding(finding, to: &$0) } }

  static func finding<O: JSONOutput>(_ finding: Finding, to o: inout O) {
    o.object { o in
      o.field("id", finding.id.hex)
      o.field("kind", finding.kind.rawValue)
      groupFields(finding.signature, count: finding.count, to: &o)
      o.field("checks", finding.checks)
      o.field("explanation", finding.explanation)
      frameFields(finding.signature, stack: finding.stack, to: &o)
      o.key("examples")
      o.array(finding.examples) { example($1, to: &$0) }
      o.field("holderKey", finding.signature.holderKey)
      o.key("holders")
      optionalHolders(finding.holders, to: &o)
    }
  }

  /// The members a finding and a late-held group share first: what groups them.
  private static func groupFields<O: JSONOutput>(_ signature: Signature, count: Int, to o: inout O)
  {
    o.field("type", signature.type)
    o.field("signature", signature.key)
    o.field("title", signature.title)
    o.field("count", count)
  }

  /// A group's signature frames and its full enqueue stack.
  private static func frameFields<O: JSONOutput>(
    _ signature: Signature, stack: [Frame], to o: inout O
  ) {
    o.key("signatureFrames")
    o.array(shared: signature.frames) { frame($1, to: &$0) }
    o.key("stack")
    o.array(shared: stack) { frame($1, to: &$0) }
  }

  /// A group of late objects held past their release (`docs/report-format.md`, "Late
  /// objects held past their release").
  static func lateHeld<O: JSONOutput>(_ group: LateHeldGroup, to o: inout O) {
    o.object { o in
      groupFields(group.signature, count: group.count, to: &o)
      frameFields(group.signature, stack: group.stack, to: &o)
      o.key("examples")
      o.array(group.examples) { lateExample($1, to: &$0) }
      o.field("holderKey", group.holders.groupingKey)
      o.key("holders")
      holders(group.holders, to: &o)
    }
  }

  static func lateExample<O: JSONOutput>(_ example: LateHeldExample, to o: inout O) {
    o.object { o in
      o.field("session", example.session)
      o.field("id", Int64(truncatingIfNeeded: example.id))
      o.hexField("obj", example.address.rawValue)
      o.field("type", example.type)
      o.field("queue", example.queue)
      o.field("enqueuedNs", example.enqueuedAt)
      o.field("releasedNs", example.releasedAt)
      o.field("deallocNs", example.deallocAt)
      o.key("location")
      location(example.location, to: &o)
      o.key("holders")
      holders(example.holders, to: &o)
    }
  }

  private static func optionalHolders<O: JSONOutput>(_ report: HolderReport?, to o: inout O) {
    if let report { holders(report, to: &o) } else { o.null() }
  }

  /// A holder report (`docs/report-format.md`, "Holders"): the log's HOLDERS-VALUE with the
  /// report's key conventions, plus the text lines every other output shows.
  static func holders<O: JSONOutput>(_ report: HolderReport, to o: inout O) {
    o.object { o in
      o.field("direct", report.direct)
      o.field("more", report.more)
      o.field("surplus", report.surplus)
      o.field("scanUs", report.scanMicroseconds)
      o.field("key", report.groupingKey)
      o.key("paths")
      o.array(report.paths) { holderPath($1, to: &$0) }
      // Only with allocation stacks on, so that reports of other logs keep their shape.
      if !report.allocationStack.isEmpty {
        o.key("allocStack")
        o.array(report.allocationStack) { frame($1, to: &$0) }
      }
      if let history = report.retainHistory {
        o.key("retainHistory")
        retainHistory(history, to: &o)
      }
    }
  }

  /// A retain/release history (`docs/report-format.md`, "Retain/release history"): its
  /// events, paired, each with its frames, and the indexes of the program's references
  /// never given back.
  static func retainHistory<O: JSONOutput>(_ history: RetainHistory, to o: inout O) {
    let pairing = RetainPairing(history)
    let rows = RetainHistoryText.timeline(history)
    o.object { o in
      o.key("events")
      o.array(Array(zip(pairing.events, rows))) { o, pair in
        let (event, row) = pair
        o.object { o in
          o.field("op", event.kind.rawValue)
          o.field("count", event.countAfter.map(Int64.init))
          o.field("paired", row.pairing)
          o.field("outstanding", row.outstanding)
          o.key("frames")
          o.array(event.frames) { frame($1, to: &$0) }
        }
      }
      o.key("outstanding")
      o.array(pairing.outstanding) { $0.int(Int64($1 + 1)) }
      o.field("droppedPaired", Int64(history.droppedPaired))
      o.field("lost", Int64(history.lost))
    }
  }

  static func holderPath<O: JSONOutput>(_ path: HolderPath, to o: inout O) {
    let root = path.root
    o.object { o in
      o.field("root") { o in
        o.object { o in
          o.field("kind", root.kind.rawValue)
          o.field("sym", root.symbol)
          o.field("mod", root.module)
          o.hexField("off", root.offset)
          o.field("tid", root.tid)
        }
      }
      o.key("steps")
      o.array(path.steps) { holderStep($1, to: &$0) }
      o.field("omittedSteps", path.omittedSteps)
    }
  }

  static func holderStep<O: JSONOutput>(_ step: HolderStep, to o: inout O) {
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
    o.object { o in
      o.field("type", step.type)
      o.hexField("obj", step.address?.rawValue)
      o.field("off", step.offset)
      o.field("field", field)
      o.field("element", element)
      o.field("count", count)
      o.key("captures")
      if let captures { o.array(captures) { $0.string($1) } } else { o.null() }
    }
  }

  static func example<O: JSONOutput>(_ example: FindingExample, to o: inout O) {
    o.object { o in
      o.field("session", example.session)
      o.field("id", example.id.map { Int64(truncatingIfNeeded: $0) })
      o.hexField("obj", example.address.rawValue)
      o.field("type", example.type)
      o.field("queue", example.queue)
      o.field("enqueuedNs", example.enqueuedAt)
      o.field("releasedNs", example.releasedAt)
      o.field("rc", example.retainCount)
      o.field("checkedNs", example.checkedAt)
      o.field("checkLabel", example.checkLabel)
      o.field("ageNs", example.age)
      o.key("location")
      location(example.location, to: &o)
      o.key("holders")
      optionalHolders(example.holders, to: &o)
    }
  }

  static func check<O: JSONOutput>(_ verdict: CheckVerdict, to o: inout O) {
    o.object { o in
      o.field("verdict", verdict.verdict.rawValue)
      o.field("session", verdict.session)
      o.field("tNs", verdict.check.time)
      o.field("label", verdict.check.label)
      o.field("type", verdict.check.type)
      o.hexField("obj", verdict.check.object.rawValue)
      o.field("id", verdict.object.map { Int64(truncatingIfNeeded: $0.id) })
      o.field("queue", verdict.object?.queue)
      o.field("enqueuedNs", verdict.object?.enqueuedAt)
      o.field("releasedNs", verdict.object?.releasedAt)
      o.field("state", verdict.object?.state?.rawValue)
      o.field("explanation", verdict.explanation)
      o.key("location")
      location(verdict.location, to: &o)
      o.key("holders")
      optionalHolders(verdict.holders, to: &o)
    }
  }

  static func latency<O: JSONOutput>(_ distribution: LatencyDistribution, to o: inout O) {
    guard let stats = distribution.stats else { return o.null() }
    o.object { o in
      o.field("count", stats.count)
      o.field("minNs", stats.min)
      o.field("p50Ns", stats.p50)
      o.field("p90Ns", stats.p90)
      o.field("p99Ns", stats.p99)
      o.field("maxNs", stats.max)
      o.field("meanNs", stats.mean)
      o.field("exact", distribution.isExact)
    }
  }

  static func peak<O: JSONOutput>(_ peak: QueuePeak, to o: inout O) {
    o.object { o in
      o.field("queue", peak.queue)
      o.field("session", peak.session)
      o.field("depth", peak.depth)
      o.field("tNs", peak.at)
    }
  }

  static func type<O: JSONOutput>(_ row: TypeRow, to o: inout O) {
    o.object { o in
      o.field("type", row.type)
      o.field("enqueued", row.enqueued)
      for state in ObjectState.allCases {
        o.key(named: state.rawValue)
        o.int(row[state])
      }
      o.field("falseLeaks", row.falseLeaks)
      o.field("trueLeaks", row.trueLeaks)
    }
  }

  static func session<O: JSONOutput>(_ session: SessionReport, to o: inout O) {
    o.object { o in
      o.field("index", session.index)
      o.field("file", session.file)
      o.field("line", session.line)
      o.field("pid", session.header.pid)
      o.field("exe", session.header.executable)
      o.field("wall", session.header.wallClock)
      o.key("delayMs")
      if let delay = session.header.delayMilliseconds { o.double(delay) } else { o.null() }
      o.field("complete", session.isComplete)
      o.field("truncated", session.truncated)
      o.key("end")
      if let end = session.end {
        o.object { o in
          o.field("why", end.reason)
          o.field("tNs", end.time)
          o.field("pending", end.pending)
          o.field("lost", end.lost)
        }
      } else {
        o.null()
      }
      o.field("lastNs", session.lastTime)
      o.key("summary")
      summary(session.summary, to: &o)
      o.key("queues")
      o.array(session.queues) { o, queue in
        o.object { o in
          o.field("name", queue.queue)
          o.field("enqueued", queue.enqueued)
          o.field("drains", queue.drains)
          // Only for a queue with a bound (`maxPending`) that was reached.
          if queue.boundDrains > 0 { o.field("boundDrains", queue.boundDrains) }
          o.field("peakDepth", queue.peakDepth)
          o.field("peakNs", queue.peakTime)
        }
      }
      o.field("marks", session.marks.count + session.omittedMarks)
      o.field("unknownKinds") { o in
        o.object { o in
          for (kind, count) in session.unknownKinds.sorted(by: { $0.key < $1.key }) {
            o.key(named: kind)
            o.int(count)
          }
        }
      }
      o.field("malformedLines", session.malformedLines)
    }
  }

  static func warning<O: JSONOutput>(_ warning: LogWarning, to o: inout O) {
    o.object { o in
      o.field("kind", warning.kind.rawValue)
      o.field("file", warning.location?.file)
      o.field("line", warning.location?.line)
      o.field("message", warning.message)
    }
  }
}
