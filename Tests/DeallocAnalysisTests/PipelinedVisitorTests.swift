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

  /// Remembers what it is handed, marking the records that came through their own methods.
  private struct HotRecorder: LogVisitor {
    var seen: [String] = []
    /// The enqueue id at which to throw, if any.
    var throwAtEnqueue: UInt64?

    mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
      seen.append("\(location) event \(event)")
    }

    mutating func visitEnqueue(_ record: consuming EnqueueRecord, at location: LogLocation)
      throws(AnalysisError)
    {
      if record.id == throwAtEnqueue { throw .noInput }
      seen.append("\(location) enqueue \(record.id) \(record.type)")
    }

    mutating func visitRelease(_ record: ReleaseRecord, at location: LogLocation) {
      seen.append("\(location) release \(record.id)")
    }

    mutating func warn(_ warning: LogWarning) { seen.append("warning \(warning.message)") }
  }

  /// Enqueues and releases through their own methods, between other records and warnings,
  /// over batch boundaries: each arrives through its method, in order.
  private func feedHot<V: LogVisitor>(_ visitor: inout V) throws(AnalysisError) {
    for index in 0..<PipelinedVisitor<HotRecorder>.batchSize * 3 {
      let location = LogLocation(file: index < 3000 ? "a.jsonl" : "b.jsonl", line: index + 1)
      switch index % 4 {
      case 0:
        try visitor.visitEnqueue(
          EnqueueRecord(
            time: Int64(index), id: UInt64(index), object: Address(0x1000 + UInt64(index)),
            type: "T\(index % 7)", queue: "q"),
          at: location)
      case 1:
        try visitor.visitRelease(
          ReleaseRecord(time: Int64(index), id: UInt64(index - 1), tid: nil, freed: true),
          at: location)
      case 2:
        try visitor.visit(
          .record(.dealloc(DeallocRecord(time: Int64(index), id: UInt64(index)))), at: location)
      default:
        visitor.warn(LogWarning(.malformedLine, at: nil, "line \(index)"))
      }
    }
  }

  @Test func hotRecordsArriveThroughTheirOwnMethodsInOrder() throws {
    var inline = HotRecorder()
    try feedHot(&inline)
    var pipelined = PipelinedVisitor(HotRecorder())
    try feedHot(&pipelined)
    let result = try pipelined.finish()
    #expect(result.seen == inline.seen)
    #expect(result.seen.filter { $0.contains(" enqueue ") }.count == inline.seen.count / 4)
    #expect(result.seen.filter { $0.contains(" release ") }.count == inline.seen.count / 4)
    #expect(result.seen.first == "a.jsonl:1 enqueue 0 T0")
  }

  /// A visitor without the record methods gets each record wrapped, through `visit`.
  @Test func aVisitorWithoutTheRecordMethodsGetsTheRecordsWrapped() throws {
    var pipelined = PipelinedVisitor(Recorder())
    try pipelined.visitRelease(
      ReleaseRecord(time: 5, id: 9, tid: nil, freed: true), at: LogLocation(file: "f", line: 3))
    #expect(try pipelined.finish().seen == ["f:3 release 9"])
  }

  /// A visitor that throws at an enqueue in the middle of a batch: the error reaches the
  /// reader, and the records of every kind left in that batch (names long enough to own
  /// memory) are dropped with it.
  @Test func stopsWithTheVisitorsErrorInABatchOfEveryKind() {
    let failing = UInt64(PipelinedVisitor<HotRecorder>.batchSize + 400)
    var pipelined = PipelinedVisitor(HotRecorder(throwAtEnqueue: failing))
    var thrown: AnalysisError?
    do {
      for index in 0..<PipelinedVisitor<HotRecorder>.batchSize * 3 {
        let location = LogLocation(file: "a.jsonl", line: index + 1)
        if index % 3 == 0 {
          try pipelined.visitEnqueue(
            EnqueueRecord(
              time: Int64(index), id: UInt64(index), object: Address(UInt64(index) * 16),
              type: "App.ATypeNameLongerThanFifteenBytes\(index)", queue: "a long queue name"),
            at: location)
        } else if index % 3 == 1 {
          try pipelined.visitRelease(
            ReleaseRecord(time: Int64(index), id: UInt64(index - 1), freed: false, retainCount: 2),
            at: location)
        } else {
          pipelined.warn(LogWarning(.malformedLine, at: nil, "a warning long enough \(index)"))
        }
      }
      _ = try pipelined.finish()
    } catch {
      thrown = error
    }
    #expect(thrown == .noInput)
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

  /// What lands in the batch's last free slot just before an input's name (issue 29, item
  /// 1): the name used to be appended without a check, so a batch one short of full went
  /// past its capacity, and from then on never read as full again (a heap overflow).
  enum LastItem: CaseIterable, Sendable {
    case enqueue, release, event, warning
  }

  /// `before` items on "a.jsonl" (its name first), then `kind` on "b.jsonl", then three
  /// batches more, switching to "c.jsonl" halfway: the names and items land on every side
  /// of a batch's end.
  private func feedAcrossInputs<V: LogVisitor>(
    _ visitor: inout V, before: Int, last kind: LastItem
  ) throws(AnalysisError) {
    let size = PipelinedVisitor<HotRecorder>.batchSize
    func item(_ index: Int, _ kind: LastItem, _ file: String) throws(AnalysisError) {
      let location = LogLocation(file: file, line: index + 1)
      switch kind {
      case .enqueue:
        try visitor.visitEnqueue(
          EnqueueRecord(
            time: Int64(index), id: UInt64(index), object: Address(UInt64(index) * 16),
            type: "App.ATypeNameLongerThanFifteenBytes\(index % 5)", queue: "q"),
          at: location)
      case .release:
        try visitor.visitRelease(
          ReleaseRecord(time: Int64(index), id: UInt64(index), tid: nil, freed: true),
          at: location)
      case .event:
        try visitor.visit(
          .record(.dealloc(DeallocRecord(time: Int64(index), id: UInt64(index)))), at: location)
      case .warning:
        visitor.warn(LogWarning(.malformedLine, at: location, "a warning at \(index)"))
      }
    }
    // The first item notes "a.jsonl" too: `before` items in all.
    for index in 0..<(before - 1) { try item(index, .release, "a.jsonl") }
    try item(before, kind, "b.jsonl")
    let kinds = LastItem.allCases
    for index in 0..<size * 3 {
      let file = index < size * 3 / 2 ? "b.jsonl" : "c.jsonl"
      try item(before + 1 + index, kinds[index % kinds.count], file)
    }
  }

  @Test(arguments: LastItem.allCases, [2045, 2046, 2047, 2048, 2049])
  func anInputsNameAtTheBatchsEndNeverOverflowsIt(last: LastItem, before: Int) throws {
    #expect(PipelinedVisitor<HotRecorder>.batchSize == 2048, "the offsets assume 2,048")
    var inline = HotRecorder()
    try feedAcrossInputs(&inline, before: before, last: last)
    var pipelined = PipelinedVisitor(HotRecorder())
    try feedAcrossInputs(&pipelined, before: before, last: last)
    let result = try pipelined.finish()
    #expect(result.seen.count == inline.seen.count)
    #expect(result.seen == inline.seen)
  }

  /// With batches of one to five items, every item (a name, an event, a warning) lands at
  /// every place in a batch, its end included.
  @Test(arguments: 1...5)
  func tinyBatchesDeliverWhatAnInlineVisitorSees(batchSize: Int) throws {
    var inline = HotRecorder()
    try feedAcrossInputs(&inline, before: 7, last: .warning)
    var pipelined = PipelinedVisitor(HotRecorder(), batchSize: batchSize)
    try feedAcrossInputs(&pipelined, before: 7, last: .warning)
    #expect(try pipelined.finish().seen == inline.seen)
  }
}
