import DeallocAnalysis
import Testing

/// `fixtures/holders.jsonl` (a session recorded with holders on, written by hand to the
/// `holders` record of docs/log-format.md) through every renderer of this module, against
/// `fixtures/expected/holders*`. Its objects: two thumbnails held by a global array cache
/// (one finding, ×2), a closure that captures `self` only, a closure context with two
/// captures, a global → property → object chain (first seen from a stale stack slot, then
/// from its global at the end), an object held through another thread's stack, one with
/// several direct holders, one whose scan was skipped, a late one, a freed one and a true
/// leak with its check scan.
@Suite struct HolderGoldenTests {
  static let name = "holders"

  @Test func reportMatchesGoldenFiles() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    try Fixtures.assertGolden(TextRenderer().render(report), "\(Self.name).txt")
    try Fixtures.assertGolden(JSONRenderer().render(report), "\(Self.name).json")
    try Fixtures.assertGolden(MarkdownRenderer().render(report), "\(Self.name).md")
    try Fixtures.assertGolden(HTMLRenderer().render(report), "\(Self.name).html")
  }

  @Test(arguments: ["Shop.Preview", "Shop.Session", "0x7f75aa00a2f0", "Shop.CartModel"])
  func explainMatchesGoldenFiles(_ target: String) throws {
    var collector = ObjectHistoryCollector(ObjectSelector(target))
    var reader = LogReader()
    try reader.read([Fixtures.input("\(Self.name).jsonl")], into: &collector)
    let text = ExplainRenderer().render(
      collector.histories, selector: collector.selector, omitted: collector.omitted)
    try Fixtures.assertGolden(text, "explain-\(Self.name)-\(target).txt")
  }

  @Test func sameHolderPathGroupsAsOneFinding() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    let thumbs = report.findings.filter { $0.signature.type == "Shop.Thumb" }
    #expect(thumbs.count == 1)
    #expect(thumbs.first?.count == 2)
    #expect(
      thumbs.first?.signature.holderKey
        == "global Shop.ImageCache.shared → Shop.ImageCache.keep"
        + " → _ContiguousArrayStorage<AnyObject>[element]")
    // The key holds no address, offset, index or count.
    #expect(thumbs.first?.signature.key.contains("0x") == false)
  }

  @Test func aSurvivorTakesItsLatestScanWhileAlive() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    let session = try #require(report.findings.first { $0.signature.type == "Shop.Session" })
    #expect(session.holders?.paths.first?.root.symbol == "Shop.AppState.current")
  }

  @Test func aTrueLeakTakesTheCheckScanThatFollowsIt() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    let settings = try #require(report.findings.first { $0.kind == .trueLeak })
    #expect(settings.holders?.paths.first?.root.symbol == "Shop.Settings.shared")
    #expect(settings.signature.holderKey == "global Shop.Settings.shared")
  }

  @Test func aLateObjectIsListedWithItsHoldersAtItsRelease() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    #expect(report.summary.late == 1)
    let preview = try #require(report.lateHeld.first)
    #expect(report.lateHeld.count == 1)
    #expect(preview.signature.type == "Shop.Preview")
    #expect(preview.count == 1)
    #expect(preview.holders.paths.first?.root.symbol == "Shop.PreviewPane.last")
    #expect(preview.examples.first?.deallocAt == 180_000_000)
    // Not a finding: it was freed.
    #expect(!report.findings.contains { $0.signature.type == "Shop.Preview" })
  }

  @Test func holdersRecordedAndSkippedScansAreCounted() throws {
    let report = try Fixtures.report(["\(Self.name).jsonl"])
    #expect(report.holders.recorded)
    #expect(report.holders.scans == 10)
    #expect(report.holders.skippedScans == 1)
    let orphan = try #require(report.findings.first { $0.signature.type == "Shop.Orphan" })
    #expect(orphan.holders == nil)
    #expect(orphan.signature.holderKey == nil)
  }
}
