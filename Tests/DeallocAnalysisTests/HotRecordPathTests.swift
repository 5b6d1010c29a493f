import DeallocLog
import Foundation
import Testing

@testable import DeallocAnalysis

/// Enqueues and releases in the recorder's shape go from the reader to the analyzer through
/// methods of their own (``LogVisitor/visitEnqueue(_:at:)``); every other record, and every
/// record of a visitor without those methods, goes through `visit`. Both ways must make the
/// same report.
@Suite struct HotRecordPathTests {
  /// Hands everything to the analyzer through `visit`: the records wrapped, as every record
  /// went before enqueues and releases had methods of their own.
  private struct WrappedOnly: LogVisitor {
    var analyzer = Analyzer()

    mutating func visit(_ event: consuming LogEvent, at location: LogLocation)
      throws(AnalysisError)
    {
      try analyzer.visit(event, at: location)
    }

    mutating func warn(_ warning: LogWarning) { analyzer.warn(warning) }
  }

  /// The JSON report of `inputs` read into the analyzer directly, and through `visit` only.
  private static func bothWays(_ inputs: [LogInput]) throws -> (direct: String, wrapped: String) {
    var direct = Analyzer()
    var reader = LogReader()
    try reader.read(inputs, into: &direct)
    var wrapped = WrappedOnly()
    var otherReader = LogReader()
    try otherReader.read(inputs, into: &wrapped)
    let names = inputs.map(\.displayName)
    return (
      JSONRenderer().render(direct.finish(inputs: names)),
      JSONRenderer().render(wrapped.analyzer.finish(inputs: names))
    )
  }

  @Test(arguments: [
    "feed", "address-reuse", "several-sessions", "truncated-tail", "garbage-lines",
    "survivor-late", "stalled-queue", "unknown-kinds", "hostile-names", "hostile-escapes",
    "holders", "recorded-feed-demo", "recorded-holders",
  ])
  func everyFixtureMakesTheSameReportBothWays(_ name: String) throws {
    let (direct, wrapped) = try Self.bothWays([Fixtures.input("\(name).jsonl")])
    #expect(direct == wrapped)
  }

  /// The reader's tallies for the records it hands over alone: records before the first
  /// session (skipped and counted), after a session's `end` (read, and said), a pending
  /// alive check followed by them, and the session's last time taken from them.
  @Test func theTalliesOfRecordsHandedOverAloneAreTheSame() throws {
    let log = try TemporaryLog([
      #"{"ev":"enqueue","t":1,"id":1,"obj":"0x10","type":"T","q":"q"}"#,
      #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/a","wall":"2026-12-01T00:00:00Z","delay_ms":100,"frames":8,"holders":true}"#,
      #"{"ev":"enqueue","t":5,"id":2,"obj":"0x20","type":"T","q":"q","tid":1,"depth":1}"#,
      #"{"ev":"check","t":6,"obj":"0x20","type":"T","alive":true,"label":"c","id":2}"#,
      #"{"ev":"enqueue","t":7,"id":3,"obj":"0x30","type":"T","q":"q"}"#,
      #"{"ev":"release","t":9,"id":2,"freed":false,"rc":2}"#,
      #"{"ev":"end","t":10,"why":"exit","pending":1,"lost":0}"#,
      #"{"ev":"release","t":900,"id":3,"freed":true}"#,
      #"{"ev":"enqueue","t":950,"id":4,"obj":"0x40","type":"U","q":"q"}"#,
    ])
    let (direct, wrapped) = try Self.bothWays([LogInput(path: log.path)])
    #expect(direct == wrapped)
    #expect(direct.contains("2 record(s) after the session's 'end' (line 7)"))
    #expect(direct.contains("\"lastNs\": 950,"))
  }
}
