import DeallocAnalysis
import Testing

/// The report's one sentence about holders, and hostile names in holder paths.
@Suite struct HolderHintTests {
  static let rerun = "Rerun with DEALLOCTRACE_HOLDERS=1"

  /// Three leaked objects of different types (three findings) and a true leak.
  func leaks(holders: Bool, endExtra: String = "") -> [String] {
    let session =
      holders
      ? #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/t","holders":true}"# : Line.session()
    return [
      session,
      Line.enqueue(1, t: 10, type: "T.A"), Line.enqueue(2, t: 11, type: "T.B"),
      Line.enqueue(3, t: 12, type: "T.C"),
      Line.check(t: 13, obj: "0x9000", type: "T.D"),
      Line.release(1, t: 100, freed: false), Line.release(2, t: 101, freed: false),
      Line.release(3, t: 102, freed: false),
      #"{"ev":"end","t":200,"why":"exit","pending":0,"lost":0\#(endExtra)}"#,
    ]
  }

  func occurrences(_ text: String, _ part: String) -> Int {
    text.components(separatedBy: part).count - 1
  }

  @Test func withoutHoldersTheRerunHintAppearsOnceInEveryOutput() throws {
    let report = try TemporaryLog(leaks(holders: false)).report()
    #expect(report.findings.count == 4)
    #expect(occurrences(TextRenderer().render(report), Self.rerun) == 1)
    #expect(occurrences(MarkdownRenderer().render(report), "DEALLOCTRACE\\_HOLDERS=1") == 1)
    #expect(occurrences(HTMLRenderer().render(report), Self.rerun) == 1)
    let json = JSONRenderer().render(report)
    #expect(json.contains(#""holdersRecorded": false"#))
    #expect(occurrences(json, Self.rerun) == 1)
  }

  @Test func aCleanLogGetsNoHint() throws {
    let report = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 1), Line.release(1, t: 2), Line.end(t: 3),
    ]).report()
    #expect(!TextRenderer().render(report).contains("DEALLOCTRACE_HOLDERS"))
    #expect(!MarkdownRenderer().render(report).contains("HOLDERS"))
  }

  @Test func aLateObjectAloneGetsTheHint() throws {
    let report = try TemporaryLog([
      Line.session(), Line.enqueue(1, t: 1), Line.release(1, t: 2, freed: false),
      Line.dealloc(1, t: 3), Line.end(t: 4),
    ]).report()
    #expect(report.findings.isEmpty)
    #expect(occurrences(TextRenderer().render(report), Self.rerun) == 1)
  }

  @Test func withHoldersOnNoRerunHintAndSkippedScansAreCountedOnce() throws {
    let on = try TemporaryLog(leaks(holders: true)).report()
    #expect(!TextRenderer().render(on).contains(Self.rerun))
    #expect(!TextRenderer().render(on).contains("holder path"))

    let skipped = try TemporaryLog(
      leaks(holders: true, endExtra: #","holder_scans":0,"holder_scans_skipped":4"#)
    ).report()
    let text = TextRenderer().render(skipped)
    let sentence =
      "4 findings have no holder path: the recorder skipped 4 holder scans (it caps scans per"
      + " session and per finding signature, and counts the rest in its end record)."
    #expect(occurrences(text, sentence) == 1, "\(text)")
    #expect(!text.contains(Self.rerun))
    #expect(occurrences(MarkdownRenderer().render(skipped), "no holder path") == 1)
  }

  /// The recorder writes a check's holders record on the checking thread, so a drain on
  /// another thread can put its records in between: the check still takes its path, and a
  /// record about the checked object itself ends the wait.
  @Test func aCheckTakesItsHoldersRecordPastOtherThreadsRecords() throws {
    let scan =
      #"{"ev":"holders","t":60,"id":1,"obj":"0x1010","type":"T.A","why":"check","direct":1,"#
      + #""more":0,"paths":[{"root":{"kind":"cycle"},"steps":[{"type":"T.A","obj":"0x1010","#
      + #""off":16,"field":"onChange"}]}]}"#
    func report(between: [String]) throws -> Report {
      try TemporaryLog(
        [
          #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/t","holders":true}"#,
          Line.enqueue(1, t: 10, type: "T.A"), Line.enqueue(2, t: 11, type: "T.B"),
          Line.release(1, t: 20, freed: false),
          #"{"ev":"check","t":50,"obj":"0x1010","type":"T.A","alive":true,"label":"L","id":1}"#,
        ] + between + [scan, #"{"ev":"end","t":200,"why":"exit","pending":0,"lost":0}"#]
      ).report()
    }
    let apart = try report(between: [Line.release(2, t: 55, freed: true)])
    // Object 1 then leaked: one leaked finding, with the check's holders.
    let leak = try #require(apart.findings.first { $0.kind == .leaked })
    #expect(leak.checks == 1)
    #expect(leak.holders?.paths.first?.root.kind == .cycle)
    let sameObject = try report(between: [#"{"ev":"dealloc","t":55,"id":1}"#])
    #expect(sameObject.findings.first { $0.kind == .trueLeak }?.holders == nil)
  }

  @Test func hostileHolderNamesCannotBreakMarkdownOrHTML() throws {
    let log = try TemporaryLog([
      #"{"ev":"session","v":1,"t":0,"holders":true}"#,
      Line.enqueue(1, t: 1, type: "T.A"),
      Line.release(1, t: 2, freed: false),
      #"{"ev":"holders","t":3,"id":1,"obj":"0x1010","type":"T.A","why":"release","direct":1,"more":0,"paths":[{"root":{"kind":"global","sym":"```</pre><script>x</script>","mod":"/m"},"steps":[{"type":"T.B\n## injected","obj":"0x20","off":8,"field":"f|`x`"}]}]}"#,
      Line.end(t: 4),
    ])
    let report = try log.report()
    let markdown = MarkdownRenderer().render(report)
    // Inside the fence: no backtick run can close it, no line break can start a heading.
    #expect(!markdown.contains("````"))
    #expect(!markdown.contains("\n## injected"))
    #expect(markdown.contains("global ˋˋˋ</pre><script>x</script>"))
    let html = HTMLRenderer().render(report)
    #expect(!html.contains("<script>x</script>"))
    #expect(html.contains("&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;"))
    let text = TextRenderer().render(report)
    #expect(text.contains(#"→ T.B\n## injected.f|`x`"#))
  }
}
