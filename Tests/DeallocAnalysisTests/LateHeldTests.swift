import DeallocAnalysis
import Testing

/// The report's section of late objects held past their release: objects released with
/// `freed: false` whose holders were scanned at the release, then deallocated.
@Suite struct LateHeldTests {
  static let sessionWithHolders =
    #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/t","wall":"2026-01-01T00:00:00Z","delay_ms":100,"frames":8,"holders":true}"#

  /// A `holders` record (`why: "release"`) for object `id`: held by the global `global`
  /// through a field, or through an array's element `element`.
  static func holders(_ id: Int, t: Int64, global: String = "T.Cache.shared", element: Int = 0)
    -> String
  {
    let obj = "0x\(String(0x1000 + id * 16, radix: 16))"
    return
      #"{"ev":"holders","t":\#(t),"id":\#(id),"obj":"\#(obj)","type":"T.Node","why":"release","direct":1,"more":0,"paths":[{"root":{"kind":"global","sym":"\#(global)","mod":"/t"},"steps":[{"type":"T.Cache","obj":"0x9000","off":16,"field":"entries"},{"type":"Swift._ContiguousArrayStorage<Swift.AnyObject>","obj":"0x9100","off":\#(32 + 8 * element),"element":\#(element),"count":4}]}],"scan_us":5}"#
  }

  /// A late object: enqueued, released alive (with a holders record when `global` is set),
  /// then deallocated.
  static func late(_ id: Int, global: String?, element: Int = 0) -> [String] {
    let t = Int64(id) * 1_000_000
    var lines = [
      Line.enqueue(id, t: t, stack: 1), Line.release(id, t: t + 100_000_000, freed: false),
    ]
    if let global {
      lines.append(holders(id, t: t + 100_000_100, global: global, element: element))
    }
    lines.append(Line.dealloc(id, t: t + 150_000_000))
    return lines
  }

  static let stack = Line.stack(1, symbols: ["T.Screen.close() -> ()", "T.Tests.test() -> ()"])

  @Test func aLateObjectWithoutAHoldersRecordAddsNoSection() throws {
    for session in [Line.session(), Self.sessionWithHolders] {
      let log = try TemporaryLog(
        [session, Self.stack] + Self.late(1, global: nil) + [Line.end(t: 900_000_000)])
      let report = try log.report()
      #expect(report.summary.late == 1)
      #expect(report.lateHeld.isEmpty)
      #expect(report.omittedLateHeld == 0)
      #expect(!TextRenderer().render(report).contains("Late deallocs"))
      #expect(!MarkdownRenderer().render(report).contains("Late deallocs"))
      #expect(!HTMLRenderer().render(report).contains("late-held"))
      #expect(JSONRenderer().render(report).contains(#""lateHeld": [],"#))
    }
  }

  @Test func twoLateObjectsHeldTheSameWayGroupAsOne() throws {
    let log = try TemporaryLog(
      [Self.sessionWithHolders, Self.stack]
        + Self.late(1, global: "T.Cache.shared", element: 0)
        + Self.late(2, global: "T.Other.cache")
        + Self.late(3, global: "T.Cache.shared", element: 3)
        + [Line.end(t: 900_000_000)])
    let report = try log.report()
    #expect(report.summary.late == 3)
    #expect(report.findings.isEmpty)
    #expect(report.lateHeld.map(\.count) == [2, 1])
    #expect(report.lateHeldCount == 3)
    let cache = try #require(report.lateHeld.first)
    #expect(cache.examples.map(\.id) == [1, 3])
    #expect(
      cache.signature.holderKey
        == "global T.Cache.shared → T.Cache.entries"
        + " → Swift._ContiguousArrayStorage<Swift.AnyObject>[element]")
    #expect(cache.signature.title == "T.Node from Screen.close()")
    let text = TextRenderer().render(report)
    #expect(text.contains("Late deallocs: held past their release (3)"))
    #expect(text.contains("  - T.Node from Screen.close() (×2)\n"))
    #expect(text.contains("    held at its release by (shortest path from a root):\n"))
    #expect(text.contains("      global T.Cache.shared  (t)\n"))
    #expect(
      text.contains(
        "  - T.Node from Screen.close(): released by queue 'shared' at 102.0 ms,"
          + " freed 50.0 ms later"))
    // Late objects are no gate failures.
    #expect(Gate().evaluate(report).passed)
  }

  @Test func theSectionIsBoundedAndCountsWhatItLeavesOut() throws {
    let count = LateHeldCollector.maximumGroups + 5
    var lines = [Self.sessionWithHolders, Self.stack]
    for id in 1...count { lines += Self.late(id, global: "T.Global\(id).shared") }
    let report = try TemporaryLog(lines + [Line.end(t: 900_000_000)]).report()
    #expect(report.lateHeld.count == LateHeldCollector.maximumGroups)
    #expect(report.omittedLateHeld == 5)
    #expect(report.lateHeldCount == count)
    let text = TextRenderer().render(report)
    #expect(text.contains("Late deallocs: held past their release (\(count))"))
    let hidden = count - TextRenderer().maximumLateGroups
    #expect(
      text.contains("  - … and \(hidden) more late objects held past their release, in groups"))
    #expect(JSONRenderer().render(report).contains(#""omittedLateHeld": 5"#))
  }

  @Test func everyStringInTheSectionIsEscaped() throws {
    // A global named with a terminal escape, markup and a line separator.
    let hostile = #"T.<b>Cache</b>\u001b[31m\u2028|`x`"#
    let log = try TemporaryLog(
      [Self.sessionWithHolders, Self.stack] + Self.late(1, global: hostile)
        + [Line.end(t: 900_000_000)])
    let report = try log.report()
    #expect(report.lateHeld.count == 1)
    let text = TextRenderer().render(report)
    #expect(text.contains(#"global T.<b>Cache</b>\u{1B}[31m\u{2028}|`x`  (t)"#))
    #expect(!text.contains("\u{1B}"))
    let html = HTMLRenderer().render(report)
    #expect(html.contains("global T.&lt;b&gt;Cache&lt;/b&gt;"))
    #expect(!html.contains("<b>Cache"))
    let markdown = MarkdownRenderer().render(report)
    #expect(!markdown.contains("\u{1B}"))
    #expect(!markdown.contains("\u{2028}"))
  }
}
