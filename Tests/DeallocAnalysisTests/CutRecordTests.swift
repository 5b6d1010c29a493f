import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// The `cut` record and `end`'s `unwritten` (issue 12): parsed, and a cut session is
/// reported as incomplete with one warning that says what the cut means.
@Suite struct CutRecordTests {
  private func parse(_ text: String) throws -> LogRecord {
    var parser = RecordParser()
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBufferPointer { buffer in
      try parser.parse(UnsafeBufferPointer(buffer))
    }
  }

  @Test func cutAndUnwrittenAreDecoded() throws {
    #expect(
      try parse(#"{"ev":"cut","t":5,"max_size":20000}"#) == .cut(CutRecord(time: 5, maxSize: 20000))
    )
    #expect(
      try parse(#"{"ev":"end","t":9,"why":"exit","pending":2,"lost":0,"unwritten":77}"#)
        == .end(EndRecord(time: 9, reason: "exit", pending: 2, lost: 0, unwritten: 77)))
    // Other keys longer than 8 bytes are still skipped, including ones that share a prefix.
    #expect(
      try parse(
        #"{"ev":"end","t":9,"why":"exit","pending":2,"lost":0,"unwrittenx":1,"unwrittee":2}"#)
        == .end(EndRecord(time: 9, reason: "exit", pending: 2, lost: 0)))
  }

  @Test func aCutSessionIsIncompleteWithOneWarning() throws {
    var reader = LogReader()
    var analyzer = Analyzer()
    let log = try TemporaryLog([
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/a","wall":"W","delay_ms":100,"frames":0}"#,
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T","q":"shared","tid":1,"depth":1}"#,
      #"{"ev":"cut","t":2,"max_size":300}"#,
      #"{"ev":"end","t":3,"why":"exit","pending":1,"lost":0,"unwritten":4}"#,
    ])
    try reader.read([LogInput(path: log.path, displayName: "cut.jsonl")], into: &analyzer)
    let report = analyzer.finish(inputs: ["cut.jsonl"])
    let cuts = report.warnings.filter { $0.kind == .logCut }
    #expect(cuts.count == 1)
    #expect(cuts.first?.message.contains("4 record(s) not written") == true)
    #expect(report.hasIncompleteSession)
    #expect(report.warnings.allSatisfy { $0.kind != .unknownKinds })
  }
}
