import DeallocLog

/// The findings of the objects a session leaves in its queues (stuck, or never released):
/// the largest part of ending a session whose objects stay, an origin lookup, a grouping and
/// often an example for each of them.
///
/// Why a type of its own: on such a session the analyzer makes these findings on a second
/// thread (``start()``) while its own thread ends the rest of the session (counts, survivors,
/// checks). The reading thread waits idle by then, so the core is free, and the end of a
/// leak-heavy report, which nothing else overlaps, shortens by about as much as the smaller
/// half takes. The findings are the same: this type groups into a collector and an origin
/// cache of its own, which the analyzer appends to its collector (``FindingCollector/append(_:)``)
/// only when the collector holds no finding of their ``kind`` yet, so that appending them is
/// what adding them one by one would have made. The sequential path
/// (`Analyzer.finishQueuedObjects`) uses ``kind(of:)`` and ``example(_:_:)``, so both paths
/// share their rules.
///
/// The thread reads copies the analyzer no longer changes while it runs (``LiveObjects``
/// and the stack table share their storage copy-on-write, and the analyzer's thread only
/// reads them until ``SecondThread/finish()``); the frames and names are immutable.
struct QueuedObjectFindings {
  let live: LiveObjects
  let end: EndOfSession
  let stacks: StackIDTable<[Frame]>
  /// Type names by row, queue names by timeline.
  let typeNames: [String]
  let queueNames: [String]
  let session: Int
  let file: String
  let maximumExamples: Int

  /// The finding an object left in a queue in `state` joins; `nil` while it is pending.
  static func kind(of state: ObjectState) -> Finding.Kind? {
    switch state {
    case .stuck: return .stuck
    case .neverReleased: return .neverReleased
    default: return nil
    }
  }

  /// The kind of every finding it makes, as ``EndOfSession`` decides: a session that ended
  /// cleanly leaves objects never released, any other leaves them stuck (or pending).
  var kind: Finding.Kind { end.ended ? .neverReleased : .stuck }

  /// The example object `id` gives its finding.
  func example(_ id: UInt64, _ object: SessionState.Live) -> FindingExample {
    FindingExample(
      session: session, id: id, address: object.address, type: typeNames[Int(object.type)],
      queue: queueNames[Int(object.queue)], enqueuedAt: object.enqueuedAt,
      age: end.lastTime - object.enqueuedAt, location: LogLocation(file: file, line: object.line))
  }

  /// The findings, in log order, with origins of their own.
  func collect() -> FindingCollector {
    var findings = FindingCollector()
    findings.maximumExamples = maximumExamples
    var origins = FindingOrigins()
    for position in 0..<live.storageCount {
      guard let (id, object) = live.object(at: position),
        let kind = Self.kind(
          of: end.state(ofOpenObjectEnqueuedAt: object.enqueuedAt, released: false))
      else { continue }
      assert(kind == self.kind)
      let type = Int(object.type)
      if let originID = origins.knownID(type: type, stack: object.stack),
        findings.addMember(kind, originID: originID, example(id, object))
      {
        continue
      }
      let origin = origins.origin(
        type: type, typeName: typeNames[type], stack: object.stack,
        frames: object.stack.flatMap { stacks[$0] } ?? [])
      findings.add(kind, origin, example(id, object))
    }
    return findings
  }

  /// Starts ``collect()`` on a thread of its own.
  func start() -> SecondThread<FindingCollector> { SecondThread { collect() } }
}
