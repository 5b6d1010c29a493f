import DeallocAnalysis
import DeallocLog
import Testing

/// `explain`: bounded histories, and check verdicts by `t` as in the report.
@Suite struct ObjectHistoryTests {
  private func histories(_ log: TemporaryLog, _ selector: String) throws -> ObjectHistoryCollector {
    var collector = ObjectHistoryCollector(ObjectSelector(selector))
    var reader = LogReader()
    try reader.read([LogInput(path: log.path)], into: &collector)
    return collector
  }

  @Test func aHistoryKeepsABoundedNumberOfDrainsAndChecks() throws {
    var lines = [Line.session(), Line.enqueue(1, t: 0, obj: "0xa0")]
    for n in 1...700 { lines.append(#"{"ev":"drain","t":\#(n),"q":"shared","n":0,"tid":2}"#) }
    for n in 1...100 { lines.append(Line.check(t: 1000 + Int64(n), obj: "0xa0", id: 1)) }
    lines += [Line.release(1, t: 5000), Line.end(t: 6000)]
    let collector = try histories(try TemporaryLog(lines), "1")
    let history = try #require(collector.histories.first)
    #expect(history.entries.count == collector.maximumEntries + 1)
    #expect(history.omittedEntries == 700 + 100 - (collector.maximumEntries - 1))
    #expect(
      history.entries.first.map { if case .enqueue = $0.record { true } else { false } } == true)
    #expect(
      history.entries.last.map { if case .release = $0.record { true } else { false } } == true)
    let text = ExplainRenderer().render(
      collector.histories, selector: collector.selector, omitted: collector.omitted)
    #expect(text.contains("… 301 more drains and checks not shown"))
  }

  @Test func checkVerdictsFollowTimesNotLineOrder() throws {
    let log = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 10_000, obj: "0xa0"),
      Line.check(t: 80_000, obj: "0xa0", id: 1),  // after the release below: a true leak
      Line.release(1, t: 50_000),
      Line.check(t: 40_000, obj: "0xa0", id: 1),  // before it: a false leak
      Line.end(t: 100_000),
    ])
    let history = try #require(try histories(log, "1").histories.first)
    let verdicts = history.entries.compactMap(\.verdict)
    #expect(verdicts == [.trueLeak, .falseLeak])
  }
}
