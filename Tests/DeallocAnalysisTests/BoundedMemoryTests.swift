import Testing

@testable import DeallocAnalysis

/// The analyzer keeps what is unreleased, not what was read.
@Suite struct BoundedMemoryTests {
  @Test func releasedObjectsAreForgotten() throws {
    var analyzer = Analyzer()
    let file = "log"
    func visit(_ event: LogEvent, _ line: Int) throws {
      try analyzer.visit(event, at: LogLocation(file: file, line: line))
    }
    try visit(
      .sessionBegan(SessionInfo(index: 0, file: file, line: 1, record: SessionRecord(v: 1))), 1)
    var largest = 0
    for id in 1...200_000 {
      let t = Int64(id) * 1000
      try visit(
        .record(
          .enqueue(
            EnqueueRecord(
              t: t, id: UInt64(id), obj: Address(UInt64(0x1000 + id % 64 * 16)), type: "T.Node",
              q: "shared", tid: 1, depth: 1, stack: nil, rc: nil))), id * 2)
      largest = max(largest, analyzer.trackedObjectCount)
      try visit(
        .record(.release(ReleaseRecord(t: t + 500, id: UInt64(id), tid: 2, freed: true, rc: nil))),
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
}
