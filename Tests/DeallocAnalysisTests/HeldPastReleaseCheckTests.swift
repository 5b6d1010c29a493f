import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// A check that saw its object alive while the object waited in a queue is a false leak only
/// when the queue's release then freed it: when something else still held the object at
/// the release, the check saw a real leak, and no format may count or colour it as a false
/// leak.
@Suite struct HeldPastReleaseCheckTests {
  /// Objects 1 (`Feed.Freed`) and 2 (`Feed.Held`) are checked alive while waiting; the
  /// queue's release frees 1 and leaves 2 alive (held: `leaked`, or with `lateDealloc` freed
  /// later by its holder). `releaseFirst` writes 2's release before its check (timed after
  /// it), as a release of another thread can reach the file.
  static func log(releaseFirst: Bool = false, lateDealloc: Bool = false) -> String {
    let checkHeld =
      #"{"ev":"check","t":5000,"obj":"0x600000e02000","type":"Feed.Held","alive":true,"label":"FeedTests.testHeld","id":2,"tid":7}"#
    let releaseHeld = #"{"ev":"release","t":9000,"id":2,"tid":9,"freed":false,"rc":2}"#
    var lines = [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/b/FeedTests","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0x600000e01000","type":"Feed.Freed","q":"shared","tid":7,"depth":1}"#,
      #"{"ev":"enqueue","t":1100,"id":2,"obj":"0x600000e02000","type":"Feed.Held","q":"shared","tid":7,"depth":2}"#,
      #"{"ev":"check","t":4000,"obj":"0x600000e01000","type":"Feed.Freed","alive":true,"label":"FeedTests.testFreed","id":1,"tid":7}"#,
    ]
    lines += releaseFirst ? [releaseHeld, checkHeld] : [checkHeld, releaseHeld]
    lines.append(#"{"ev":"release","t":9100,"id":1,"tid":9,"freed":true}"#)
    if lateDealloc { lines.append(#"{"ev":"dealloc","t":9500,"id":2,"tid":7}"#) }
    lines.append(#"{"ev":"end","t":10000,"why":"exit","pending":0,"lost":0}"#)
    return lines.joined(separator: "\n") + "\n"
  }

  func report(_ log: String) throws -> Report {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-held-\(UUID().uuidString).jsonl").path
    try Data(log.utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try DeallocAnalysis.analyze([path])
  }

  @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
  func aCheckOfAnObjectItsQueueCouldNotFreeIsATrueLeak(releaseFirst: Bool, lateDealloc: Bool)
    throws
  {
    let report = try report(Self.log(releaseFirst: releaseFirst, lateDealloc: lateDealloc))
    #expect(report.summary.counts.falseLeaks == 1)
    #expect(report.summary.counts.trueLeaks == 1)
    #expect(report.falseLeaks.map(\.check.type) == ["Feed.Freed"])
    let held = try #require(report.checks.first { $0.check.type == "Feed.Held" })
    #expect(held.verdict == .trueLeak)
    #expect(held.explanation.contains("something else still held it"), "\(held.explanation)")
    #expect(held.explanation.hasSuffix("a real leak, not a delayed dealloc."))
    #expect(!held.explanation.contains("Not a leak"))
    // Freed later by its holder it is a true leak; never freed, one leaked finding holds
    // its check (one finding per object).
    #expect(
      report.findings.filter { $0.signature.type == "Feed.Held" }.map { [$0.kind: $0.checks] }
        == [lateDealloc ? [.trueLeak: 0] : [.leaked: 1]])
    // Every format: the false-leak sections list only the freed one, HTML badges it alone.
    let text = TextRenderer().render(report)
    let textSection = try #require(
      text.components(separatedBy: "\n\n").first {
        $0.contains("False leaks: delayed deallocs, not leaks (1)")
      })
    #expect(textSection.contains("Feed.Freed") && !textSection.contains("Feed.Held"))
    let markdown = MarkdownRenderer().render(report)
    let markdownSection = try #require(
      markdown.components(separatedBy: "### False leaks: delayed deallocs (1)").dropFirst().first)
    let markdownFalseLeaks = markdownSection.components(separatedBy: "\n#").first ?? ""
    #expect(markdownFalseLeaks.contains("Feed.Freed") && !markdownFalseLeaks.contains("Feed.Held"))
    // HTML: one check row coloured a false leak (the freed one), one a true leak.
    let html = HTMLRenderer().render(report)
    #expect(html.components(separatedBy: "<tr class=\"falseLeak\">").count == 2)
    #expect(html.components(separatedBy: "<tr class=\"trueLeak\">").count == 2)
  }
}
