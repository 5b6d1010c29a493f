import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The analyzer keeps what is unreleased, not what was read.
@Suite struct BoundedMemoryTests {
  @Test func releasedObjectsAreForgotten() throws {
    var analyzer = Analyzer()
    let file = "log"
    func visit(_ event: LogEvent, _ line: Int) throws {
      try analyzer.visit(event, at: LogLocation(file: file, line: line))
    }
    try visit(
      .sessionBegan(SessionInfo(index: 0, file: file, line: 1, record: SessionRecord(version: 1))),
      1)
    var largest = 0
    for id in 1...200_000 {
      let t = Int64(id) * 1000
      try visit(
        .record(
          .enqueue(
            EnqueueRecord(
              time: t, id: UInt64(id), object: Address(UInt64(0x1000 + id % 64 * 16)),
              type: "T.Node",
              queue: "shared", tid: 1, depth: 1, stack: nil, retainCount: nil))), id * 2)
      largest = max(largest, analyzer.trackedObjectCount)
      try visit(
        .record(
          .release(
            ReleaseRecord(time: t + 500, id: UInt64(id), tid: 2, freed: true, retainCount: nil))),
        id * 2 + 1)
    }
    #expect(largest == 1)
    #expect(analyzer.trackedObjectCount == 0)
    try visit(
      .sessionEnded(
        SessionEnding(
          index: 0, lastTime: 300_000_000, end: nil, truncated: false, unknownKinds: [:],
          malformedLines: 0, records: 400_000, lastLine: 400_001)), 400_001)
    let report = analyzer.finish(inputs: [file])
    #expect(report.summary.freed == 200_000)
    #expect(report.sessions[0].queues[0].points.count <= QueueTimeline.capacity)
    #expect(report.latency.enqueueToRelease.isExact == false)
  }

  /// Feeds records straight to an analyzer, numbering lines.
  private struct Feeder {
    var analyzer: Analyzer
    var line = 0
    let file = "log"

    init(options: AnalysisOptions = AnalysisOptions()) {
      analyzer = Analyzer(options: options)
    }

    mutating func begin(_ index: Int = 0) throws {
      line += 1
      try analyzer.visit(
        .sessionBegan(
          SessionInfo(index: index, file: file, line: line, record: SessionRecord(version: 1))),
        at: LogLocation(file: file, line: line))
    }

    mutating func record(_ record: LogRecord) throws {
      line += 1
      try analyzer.visit(.record(record), at: LogLocation(file: file, line: line))
    }

    mutating func end(_ index: Int = 0, lastTime: Int64, clean: Bool = true) throws {
      line += 1
      try analyzer.visit(
        .sessionEnded(
          SessionEnding(
            index: index, lastTime: lastTime,
            end: clean ? EndRecord(time: lastTime, reason: "exit", pending: 0, lost: 0) : nil,
            truncated: false, unknownKinds: [:], malformedLines: 0, records: 0, lastLine: line)),
        at: LogLocation(file: file, line: line))
    }
  }

  /// A survivor of its release is kept until its dealloc or the session's end, so a log
  /// that leaks many keeps many: plain data of 72 bytes (its stack a 4-byte slot), with no
  /// holders record inside (it held a reference-counted array to copy, and made each
  /// survivor half as big again).
  @Test func aSurvivorIsSeventyTwoBytesOfPlainData() {
    #expect(MemoryLayout<SessionState.Survivor>.stride == 72)
    #expect(_isPOD(SessionState.Survivor.self))
  }

  @Test func trueLeakChecksAreCountedNotKept() throws {
    var feeder = Feeder()
    try feeder.begin()
    var largest = 0
    for n in 1...200_000 {
      try feeder.record(
        .check(
          CheckRecord(
            time: Int64(n) * 1000, object: Address(0xdead_0000), type: "App.Cache", alive: true,
            label: "testCache")))
      largest = max(largest, feeder.analyzer.retainedCheckCount)
    }
    // The listed checks (1,000), the group and its examples: not one entry per check.
    #expect(largest <= 1001)
    try feeder.end(lastTime: 300_000_000)
    let report = feeder.analyzer.finish(inputs: ["log"])
    #expect(report.summary.trueLeaks == 200_000)
    #expect(report.checks.count == 1000)
    let finding = try #require(report.findings.first)
    #expect(finding.kind == .trueLeak)
    #expect(finding.count == 200_000)
    #expect(finding.examples.map(\.checkedAt) == [1000, 2000, 3000, 4000, 5000])
    #expect(finding.explanation.contains("(200000 checks with this signature; the first:)"))
  }

  @Test func falseLeakChecksOfAQueuedObjectAreBounded() throws {
    var feeder = Feeder()
    try feeder.begin()
    try feeder.record(
      .enqueue(
        EnqueueRecord(time: 0, id: 1, object: Address(0x1000), type: "App.Screen", queue: "shared"))
    )
    var largest = 0
    for n in 1...200_000 {
      try feeder.record(
        .check(
          CheckRecord(
            time: Int64(n), object: Address(0x1000), type: "App.Screen", alive: true,
            label: "early",
            id: 1)))
      largest = max(largest, feeder.analyzer.retainedCheckCount)
    }
    #expect(largest <= 1000 + 64)
    // The release comes after the last 10 checks: those turn into true leaks; the earliest
    // ones the ledger stopped following stay false leaks.
    try feeder.record(.release(ReleaseRecord(time: 199_991, id: 1, freed: true)))
    try feeder.end(lastTime: 300_000)
    let report = feeder.analyzer.finish(inputs: ["log"])
    #expect(report.summary.trueLeaks == 10)
    #expect(report.summary.falseLeaks == 199_990)
  }

  @Test func recentReleasesAreBoundedByCount() throws {
    var feeder = Feeder()
    try feeder.begin()
    var largest = 0
    for id in 1...100_000 {
      // All within one millisecond: the time window alone would keep every one.
      let t = Int64(id) * 10
      try feeder.record(
        .enqueue(
          EnqueueRecord(
            time: t, id: UInt64(id), object: Address(UInt64(id) * 16), type: "T", queue: "q")))
      try feeder.record(.release(ReleaseRecord(time: t + 5, id: UInt64(id), freed: true)))
      largest = max(largest, feeder.analyzer.retainedCheckCount)
    }
    #expect(largest == RecentReleases<SessionState.Released>.defaultCapacity)
  }

  @Test func manySessionsKeepBoundedDetail() throws {
    var options = AnalysisOptions()
    options.maximumListedSessions = 100
    options.maximumListedMarks = 150
    options.maximumDetailedTimelines = 20
    options.maximumThreadNames = 50
    var feeder = Feeder(options: options)
    var largest = 0
    for session in 0..<5000 {
      try feeder.begin(session)
      try feeder.record(.thread(ThreadRecord(tid: 1, name: "main")))
      for mark in 0..<3 {
        try feeder.record(.mark(MarkRecord(time: Int64(mark), label: "m\(mark)")))
      }
      // Session 4000, not listed, has the deepest queue of all.
      let depth = session == 4000 ? 9 : 2
      for id in 1...depth {
        try feeder.record(
          .enqueue(
            EnqueueRecord(
              time: Int64(id) * 10, id: UInt64(id), object: Address(UInt64(id)), type: "T",
              queue: "q",
              depth: id)))
      }
      for id in 1...depth {
        try feeder.record(
          .release(ReleaseRecord(time: 1000 + Int64(id), id: UInt64(id), freed: true)))
      }
      try feeder.end(session, lastTime: 2000, clean: session != 4500)
      largest = max(largest, feeder.analyzer.retainedSessionDetail)
    }
    // 100 sessions, 150 marks, 50 thread names, and 20 timelines of 4 points.
    #expect(largest <= 100 + 150 + 50 + 20 * 4)
    let report = feeder.analyzer.finish(inputs: ["log"])
    #expect(report.summary.sessions == 5000)
    #expect(report.summary.enqueued == 4999 * 2 + 9)
    #expect(report.sessions.count == 100)
    #expect(report.omittedSessions == 4900)
    #expect(report.sessions.reduce(0) { $0 + $1.marks.count } == 150)
    #expect(report.sessions[60].omittedMarks == 3)
    #expect(report.sessions.filter { !$0.queues[0].points.isEmpty }.count == 20)
    #expect(report.sessions[99].queues[0].peakDepth == 2, "counts and peak are kept")
    #expect(report.peak == QueuePeak(queue: "q", session: 4000, depth: 9, at: 90))
    #expect(report.hasIncompleteSession, "session 4500 has no end")
    let text = TextRenderer().render(report)
    #expect(text.contains("… 4900 more (counted above, not listed)"))
    #expect(JSONRenderer().render(report).contains("\"omittedSessions\": 4900"))
  }
}
