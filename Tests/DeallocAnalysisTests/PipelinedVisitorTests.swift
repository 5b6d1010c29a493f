import Testing

@testable import DeallocLog

/// The pipeline must deliver exactly what an inline visitor sees, in order, across batch
/// boundaries and inputs, and stop with the visitor's own error.
@Suite struct PipelinedVisitorTests {
  /// Remembers everything it is handed, as text, in order; throws at event `throwAt`.
  private struct Recorder: LogVisitor {
    var seen: [String] = []
    var throwAt: Int?
    var events = 0

    mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
      events += 1
      if events == throwAt { throw .noInput }
      switch event {
      case .record(.release(let release)): seen.append("\(location) release \(release.id)")
      case .record(let other): seen.append("\(location) \(other)")
      case .sessionBegan(let info): seen.append("\(location) began \(info.index)")
      case .sessionEnded(let ending): seen.append("\(location) ended \(ending.index)")
      }
    }

    mutating func warn(_ warning: LogWarning) { seen.append("warning \(warning.message)") }
  }

  /// A stream longer than several batches, over two files, with warnings between events.
  private func feed<V: LogVisitor>(_ visitor: inout V) throws(AnalysisError) {
    let total = PipelinedVisitor<Recorder>.batchSize * 5 + 17
    for index in 0..<total {
      let file = index < total / 2 ? "first.jsonl" : "second.jsonl"
      let record = ReleaseRecord(
        time: Int64(index), id: UInt64(index), tid: nil, freed: index % 3 == 0,
        retainCount: nil)
      try visitor.visit(.record(.release(record)), at: LogLocation(file: file, line: index + 1))
      if index % 1000 == 999 {
        visitor.warn(LogWarning(.malformedLine, at: nil, "after \(index)"))
      }
    }
  }

  @Test func deliversWhatAnInlineVisitorSeesInOrder() throws {
    var inline = Recorder()
    try feed(&inline)
    var pipelined = PipelinedVisitor(Recorder())
    try feed(&pipelined)
    let result = try pipelined.finish()
    #expect(result.seen.count == inline.seen.count)
    #expect(result.seen == inline.seen)
  }

  @Test func stopsWithTheVisitorsErrorAfterExactlyTheEventsBeforeIt() {
    let failing = PipelinedVisitor<Recorder>.batchSize * 2 + 5
    var pipelined = PipelinedVisitor(Recorder(throwAt: failing))
    var thrown: AnalysisError?
    do {
      try feed(&pipelined)
      _ = try pipelined.finish()
    } catch {
      thrown = error
    }
    #expect(thrown == .noInput)
  }
}
