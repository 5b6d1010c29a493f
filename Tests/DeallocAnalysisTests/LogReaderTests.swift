import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// Collects everything a reader delivers.
private struct Recorder: LogVisitor {
  var events: [String] = []
  var records: [LogRecord] = []
  var warnings: [LogWarning] = []
  var endings: [SessionEnding] = []

  mutating func visit(_ event: LogEvent, at location: LogLocation) throws(AnalysisError) {
    switch event {
    case .sessionBegan(let info): events.append("began \(info.index) at \(location)")
    case .record(let record):
      records.append(record)
      events.append("record at \(location)")
    case .sessionEnded(let ending):
      endings.append(ending)
      events.append("ended \(ending.index)")
    }
  }

  mutating func warn(_ warning: LogWarning) { warnings.append(warning) }
}

@Suite struct LogReaderTests {
  private func read(_ log: TemporaryLog) throws -> Recorder {
    var reader = LogReader()
    var recorder = Recorder()
    try reader.read([LogInput(path: log.path, displayName: "log")], into: &recorder)
    return recorder
  }

  @Test func sessionsAreDeliveredInOrderWithTheirBoundaries() throws {
    let log = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 5), Line.end(t: 10, pending: 1),
      Line.session(), Line.enqueue(1, t: 7),
    ])
    let recorder = try read(log)
    #expect(
      recorder.events == [
        "began 0 at log:1", "record at log:2", "record at log:3", "ended 0",
        "began 1 at log:4", "record at log:5", "ended 1",
      ])
    #expect(recorder.endings[0].end?.time == 10)
    #expect(recorder.endings[1].end == nil)
    #expect(recorder.endings[1].lastTime == 7)
  }

  @Test func aLineLongerThanTheReadChunkIsReadWhole() throws {
    let symbols = (0..<40_000).map { "Module.function\($0)()" }
    let log = try TemporaryLog([Line.session(), Line.stack(1, symbols: symbols), Line.end(t: 1)])
    #expect(try FileManager.default.attributesOfItem(atPath: log.path)[.size] as! Int > 1 << 20)
    let recorder = try read(log)
    guard case .stack(let stack)? = recorder.records.first else {
      Issue.record("no stack record")
      return
    }
    #expect(stack.frames.count == 40_000)
    #expect(stack.frames.last?.symbol == "Module.function39999()")
    #expect(recorder.warnings.isEmpty)
  }

  @Test func carriageReturnsAndBlankLinesAreTolerated() throws {
    let log = try TemporaryLog([Line.session() + "\r", "", "   ", Line.end(t: 3) + "\r"])
    let recorder = try read(log)
    #expect(recorder.warnings.isEmpty)
    #expect(recorder.endings.first?.end?.time == 3)
  }

  @Test func aCutLastLineIsAWarningAndMarksTheSessionTruncated() throws {
    let log = try TemporaryLog(
      [Line.session(), Line.enqueue(1, t: 5), #"{"ev":"rel"#], terminated: false)
    let recorder = try read(log)
    #expect(recorder.warnings.map(\.kind) == [.truncatedLine])
    #expect(recorder.warnings.first?.location == LogLocation(file: "log", line: 3))
    #expect(recorder.endings.first?.truncated == true)
  }

  @Test func aCompleteLastLineWithoutNewlineIsKept() throws {
    let log = try TemporaryLog([Line.session(), Line.end(t: 9)], terminated: false)
    let recorder = try read(log)
    #expect(recorder.warnings.isEmpty)
    #expect(recorder.endings.first?.end?.time == 9)
    #expect(recorder.endings.first?.truncated == false)
  }

  @Test func recordsBeforeTheFirstSessionAreSkippedWithOneWarning() throws {
    let log = try TemporaryLog([
      Line.enqueue(1, t: 1), Line.enqueue(2, t: 2), Line.session(), Line.end(t: 3),
    ])
    let recorder = try read(log)
    #expect(recorder.warnings.count == 1)
    #expect(recorder.warnings.first?.kind == .recordBeforeSession)
    #expect(
      recorder.warnings.first?.description
        == "log:1: 2 record(s) before the first 'session' record skipped")
  }

  @Test func malformedLinesAreSkippedWithFileAndLine() throws {
    let log = try TemporaryLog([Line.session(), "garbage", Line.end(t: 3)])
    let recorder = try read(log)
    #expect(
      recorder.warnings.map(\.description) == [
        "log:2: malformed line skipped: expected a JSON object at byte 1"
      ])
    #expect(recorder.endings.first?.malformedLines == 1)
  }

  @Test func unknownKindsAreCountedPerSession() throws {
    let log = try TemporaryLog([
      Line.session(), #"{"ev":"gc","t":1}"#, #"{"ev":"gc","t":2}"#, Line.end(t: 3),
    ])
    let recorder = try read(log)
    #expect(recorder.endings.first?.unknownKinds == ["gc": 2])
    #expect(recorder.records.count == 1)
  }

  @Test func directoriesExpandToTheirLogsInNameOrder() throws {
    let first = try TemporaryLog([Line.session(), Line.end(t: 1)], name: "b.jsonl")
    let directory = first.url.deletingLastPathComponent()
    try Data((Line.session() + "\n").utf8).write(to: directory.appendingPathComponent("a.jsonl"))
    try Data("ignored".utf8).write(to: directory.appendingPathComponent("notes.txt"))
    let inputs = try LogInput.resolve([directory.path])
    #expect(
      inputs.map { URL(fileURLWithPath: $0.path!).lastPathComponent } == ["a.jsonl", "b.jsonl"])
  }

  @Test func unusableInputIsAnErrorWithTheFileName() throws {
    let empty = try TemporaryLog([])
    let noSession = try TemporaryLog([Line.enqueue(1, t: 1)])
    let future = try TemporaryLog([Line.enqueue(1, t: 1), Line.session(v: 2)])
    #expect(throws: AnalysisError.inputEmpty(path: empty.path)) { try empty.report() }
    #expect(throws: AnalysisError.noSession(path: noSession.path)) { try noSession.report() }
    #expect(throws: AnalysisError.unsupportedVersion(path: future.path, line: 2, version: "2")) {
      try future.report()
    }
    #expect(throws: AnalysisError.inputNotFound(path: "/nonexistent.jsonl")) {
      try DeallocAnalysis.analyze(["/nonexistent.jsonl"])
    }
    let emptyDirectory = empty.url.deletingLastPathComponent().appendingPathComponent("sub")
    try FileManager.default.createDirectory(at: emptyDirectory, withIntermediateDirectories: true)
    #expect(throws: AnalysisError.noLogsInDirectory(path: emptyDirectory.path)) {
      try DeallocAnalysis.analyze([emptyDirectory.path])
    }
    #expect(throws: AnalysisError.noInput) { try DeallocAnalysis.analyze([]) }
  }

  @Test func errorDescriptionsAreOneLineWithFileAndLine() {
    let error = AnalysisError.unsupportedVersion(path: "a.jsonl", line: 3, version: "2")
    #expect(error.description.hasPrefix("a.jsonl:3: log version 2 is not supported"))
    #expect(!error.description.contains("\n"))
  }
}
