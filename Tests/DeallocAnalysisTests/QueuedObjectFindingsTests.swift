import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// Ending a session makes the findings of the objects left in its queues on a second thread
/// when there are many (``QueuedObjectFindings``): the report must be byte for byte the one
/// the sequential path makes.
@Suite struct QueuedObjectFindingsTests {
  /// The JSON report `analyze` makes with the second thread always (wherever it is
  /// allowed) and never.
  private func jsonReports(_ analyze: (AnalysisOptions) throws -> Report) throws
    -> (parallel: String, sequential: String)
  {
    var always = AnalysisOptions()
    always.queuedObjectsForParallelFindings = 0
    var never = AnalysisOptions()
    never.queuedObjectsForParallelFindings = .max
    return (JSONRenderer().render(try analyze(always)), JSONRenderer().render(try analyze(never)))
  }

  @Test(arguments: GoldenReportTests.fixtures)
  func theFixturesReportTheSameOnBothPaths(_ name: String) throws {
    let (parallel, sequential) = try jsonReports {
      try Fixtures.report(["\(name).jsonl"], options: $0)
    }
    #expect(parallel == sequential)
  }

  /// Three sessions: stuck and never-released objects of several types and stacks (many
  /// members per finding, so examples are chosen), survivors and true leaks beside them. The
  /// first ends cleanly (never released), the others do not (stuck); the third ends with
  /// stuck findings already made, so it takes the sequential path and joins them.
  @Test func sessionsWithStuckAndNeverReleasedObjectsReportTheSameOnBothPaths() throws {
    var lines: [String] = []
    for session in 0..<3 {
      lines.append(Line.session())
      for stack in 1...6 {
        lines.append(Line.stack(stack, symbols: ["App.Caller\(stack % 4).run() -> ()"]))
      }
      let objects = session == 2 ? 40 : 3_000
      for id in 1...objects {
        let type = "App.Node\(id % 5)"
        lines.append(
          Line.enqueue(id, t: Int64(id) * 1_000, type: type, stack: id % 7 == 0 ? nil : id % 6 + 1))
      }
      for id in stride(from: 1, through: objects, by: 3) {
        lines.append(Line.release(id, t: Int64(objects + id) * 1_000, freed: id % 2 == 0, rc: 2))
      }
      lines.append(Line.check(t: Int64(objects) * 2_000, obj: "0x1010", id: 1))
      lines.append(Line.check(t: Int64(objects) * 2_000, obj: "0x1020", id: 2))
      lines.append(
        session == 0
          ? Line.end(t: Int64(objects) * 3_000)
          : #"{"ev":"mark","t":5000000000,"label":"last","tid":1}"#)
    }
    let log = try TemporaryLog(lines)
    let (parallel, sequential) = try jsonReports {
      try DeallocAnalysis.analyze([log.path], options: $0)
    }
    #expect(parallel == sequential)
    #expect(parallel.contains(#""kind": "stuck""#))
    #expect(parallel.contains(#""kind": "neverReleased""#))
    #expect(parallel.contains(#""kind": "leaked""#))
    // The first two sessions took the second thread (never released, then stuck), the third
    // could not (stuck findings were made); none did with the threshold out of reach.
    for (threshold, expected) in [(0, 2), (Int.max, 0)] {
      var options = AnalysisOptions()
      options.queuedObjectsForParallelFindings = threshold
      var analyzer = Analyzer(options: options)
      var reader = LogReader()
      try reader.read([LogInput(path: log.path, displayName: "log")], into: &analyzer)
      #expect(analyzer.sessionsWithParallelFindings == expected)
      // Every session left objects in its queues: each let its tables go on a thread of
      // their own, or none did.
      #expect(analyzer.sessionsReleasedInBackground == (threshold == 0 ? 3 : 0))
    }
  }

  /// The second thread's origin ids come from a direct table by (stack, type) when it fits,
  /// else from hashing: both give the same findings and counts, including objects without
  /// a stack and types that share stacks.
  @Test func theDirectOriginTableAndHashingGiveTheSameFindings() {
    var live = LiveObjects()
    var stacks = StackIDTable<[Frame]>()
    for stack in 1...4 {
      stacks[Int64(stack)] = [
        Frame(ip: UInt64(stack) * 16, symbol: "App.Caller\(stack % 3).run() -> ()")
      ]
    }
    for id in 1...500 {
      live.insert(
        UInt64(id),
        SessionState.Live(
          enqueuedAt: Int64(id) * 1_000, address: Address(UInt64(id) * 64),
          type: Int32(id % 3), queue: 0, stack: id % 11 == 0 ? nil : Int64(id % 4 + 1),
          line: id))
    }
    func collected(pairTableLimit: Int) -> QueuedObjectFindings.Collected {
      var queued = QueuedObjectFindings(
        live: live, end: EndOfSession(lastTime: 10_000_000_000, ended: false, stuckAfter: 1_000),
        stacks: stacks, typeNames: ["A", "B", "C"], queueNames: ["q"], session: 0, file: "log",
        maximumExamples: 3)
      queued.pairTableLimit = pairTableLimit
      return queued.collect()
    }
    let direct = collected(pairTableLimit: 1 << 20)
    let hashed = collected(pairTableLimit: 0)
    #expect(direct.findings.explained() == hashed.findings.explained())
    #expect(direct.counts == hashed.counts)
    #expect(direct.counts.map(\.stuck).reduce(0, +) == 500)
    #expect(direct.findings.explained().count > 3)
  }

  /// Appending a collector of other kinds gives what adding its members one by one gives.
  @Test func appendingACollectorOfOtherKindsIsAddingItsMembers() {
    func signature(_ n: Int) -> Signature {
      Signature(type: "T\(n % 3)", frames: [Frame(ip: UInt64(n % 2 + 1), symbol: "f\(n % 2)")])
    }
    func example(_ n: Int) -> FindingExample {
      FindingExample(
        session: 0, id: UInt64(n), address: Address(UInt64(n) * 16), type: "T",
        location: LogLocation(file: "f", line: n))
    }
    var oneByOne = FindingCollector()
    var first = FindingCollector()
    var second = FindingCollector()
    for n in 0..<40 {
      let kind: Finding.Kind = n % 4 == 0 ? .leaked : .trueLeak
      let stack = [Frame(ip: UInt64(n % 5 + 1), symbol: "s\(n % 5)")]
      oneByOne.add(kind, signature(n), stack: stack, example(n))
      first.add(kind, signature(n), stack: stack, example(n))
    }
    for n in 40..<90 {
      let kind: Finding.Kind = n % 3 == 0 ? .stuck : .neverReleased
      let stack = [Frame(ip: UInt64(n % 5 + 1), symbol: "s\(n % 5)")]
      oneByOne.add(kind, signature(n), stack: stack, example(n))
      second.add(kind, signature(n), stack: stack, example(n))
    }
    first.append(second)
    #expect(first.explained() == oneByOne.explained())
    #expect(first.holds(.stuck) && !FindingCollector().holds(.stuck))
  }
}
