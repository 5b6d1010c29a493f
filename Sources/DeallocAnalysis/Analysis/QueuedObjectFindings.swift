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

  /// What the second thread hands back: the findings, and the objects counted by type row
  /// and final state (pending ones too).
  struct Collected {
    var findings: FindingCollector
    var counts: [LifecycleCounts]
  }

  /// The findings, in log order, with origins of their own, and the objects' counts: the
  /// loop over every object is this thread's, so the analyzer's thread is left with only
  /// the objects its kept checks watch (``CheckLedger/watchedIDs``).
  func collect() -> Collected {
    var findings = FindingCollector()
    findings.maximumExamples = maximumExamples
    var counts = Array(repeating: LifecycleCounts(), count: typeNames.count)
    var origins = FindingOrigins()
    // Origin ids by (stack slot + 1, type row), -1 until the pair's first member, when the
    // table is small enough: an array read per object instead of two hash-table probes.
    let typeCount = typeNames.count
    let pairCount = (live.stackSlotCount + 1) * typeCount
    var originIDs = [Int32](repeating: -1, count: pairCount <= pairTableLimit ? pairCount : 0)
    for position in 0..<live.storageCount {
      guard let (id, object) = live.object(at: position) else { continue }
      let state = end.state(ofOpenObjectEnqueuedAt: object.enqueuedAt, released: false)
      let type = Int(object.type)
      counts[type][state] += 1
      guard let kind = Self.kind(of: state) else { continue }
      assert(kind == self.kind)
      let pair = originIDs.isEmpty ? -1 : Int(live.stackSlot(at: position) + 1) * typeCount + type
      let known =
        pair < 0
        ? origins.knownID(type: type, stack: object.stack)
        : originIDs[pair] < 0 ? nil : Int(originIDs[pair])
      if let known, findings.addMember(kind, originID: known, example(id, object)) { continue }
      let origin = origins.origin(
        type: type, typeName: typeNames[type], stack: object.stack,
        frames: object.stack.flatMap { stacks[$0] } ?? [])
      if pair >= 0 { originIDs[pair] = Int32(origin.id) }
      findings.add(kind, origin, example(id, object))
    }
    return Collected(findings: findings, counts: counts)
  }

  /// The most (stack, type) pairs ``collect()`` keeps a direct table of origin ids for
  /// (4 MiB); beyond, it looks origins up by hashing. Either way the findings are the same;
  /// tests move it.
  var pairTableLimit = 1 << 20

  /// Starts ``collect()`` on a thread of its own.
  func start() -> SecondThread<Collected> { SecondThread { collect() } }
}
