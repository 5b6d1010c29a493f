import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// Ending a session looks the origins of the objects left in its queues up in an array by
/// (stack, type) when it fits (``AnalysisOptions/originTableLimit``), else in dictionaries:
/// the report must be byte for byte the same either way.
@Suite struct QueuedObjectOriginsTests {
  /// The JSON report `analyze` makes with the array of origin ids and without it.
  private func jsonReports(_ analyze: (AnalysisOptions) throws -> Report) throws
    -> (array: String, hashed: String)
  {
    var array = AnalysisOptions()
    array.originTableLimit = .max
    var hashed = AnalysisOptions()
    hashed.originTableLimit = 0
    return (JSONRenderer().render(try analyze(array)), JSONRenderer().render(try analyze(hashed)))
  }

  @Test(arguments: GoldenReportTests.fixtures)
  func theFixturesReportTheSameWithAndWithoutTheOriginArray(_ name: String) throws {
    let (array, hashed) = try jsonReports {
      try Fixtures.report(["\(name).jsonl"], options: $0)
    }
    #expect(array == hashed)
  }

  /// Three sessions: stuck and never-released objects of several types and stacks (many
  /// members per finding, so examples are chosen), survivors and true leaks beside them. The
  /// first ends cleanly (never released), the others do not (stuck); the third's stuck
  /// objects join the second's findings.
  @Test func sessionsWithStuckAndNeverReleasedObjectsReportTheSameWithAndWithoutTheOriginArray()
    throws
  {
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
    let (array, hashed) = try jsonReports {
      try DeallocAnalysis.analyze([log.path], options: $0)
    }
    #expect(array == hashed)
    #expect(array.contains(#""kind": "stuck""#))
    #expect(array.contains(#""kind": "neverReleased""#))
    #expect(array.contains(#""kind": "leaked""#))
  }
}
