import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// Census findings (issue 27) in every output of the gate as any other finding: baselines,
/// `diff`, JUnit, GitHub annotations and `explain`; the one spelling of their ids; and
/// `--library` / `--max-library-leaks` (issue 36). `fixtures/gate/census.jsonl`: a
/// checkpoint whose id has the first recorders' `L` prefix, then an exit census with the
/// program's Order/Payment cycle, a VendorKit self-cycle ×2 and XCTest's own cycle.
@Suite struct CensusGateTests {
  static let orderID = "fb73afc9ad01"
  static let vendorID = "00000000c0de"

  private func report(_ options: AnalysisOptions = AnalysisOptions()) throws -> Report {
    try GateFixtures.report("census.jsonl", options: options)
  }

  private func vendorOptions() throws -> AnalysisOptions {
    var options = AnalysisOptions()
    options.libraryModules = [try Glob("Vendor*")]
    return options
  }

  @Test func anIDWithTheOldLPrefixReadsAsTwelveHexDigits() throws {
    let report = try report()
    #expect(report.census.censuses.first?.groups.first?.id == Self.orderID)
    #expect(FindingID(parsing: "L" + Self.orderID)?.hex == Self.orderID)
    let list = try SuppressionList.parse("id:L\(Self.orderID) old spelling", file: "s.txt")
    #expect(list.suppressions.first?.glob.matches(Self.orderID) == true)
  }

  @Test func aWrittenBaselineRecordsTheCensusFindingsAndAcceptsThemBack() throws {
    let report = try report()
    let failing = Gate().evaluate(report)
    #expect(!failing.passed)
    #expect(failing.processLeaks?.count == 3)
    let baseline = Baseline(recording: failing, path: "b.json")
    let entries = baseline.entries.filter(\.isProcess)
    #expect(entries.map(\.id.hex) == [Self.orderID, Self.vendorID])
    #expect(entries.map(\.kind.rawValue) == ["processCycle", "processCycle"])
    #expect(entries.map(\.count) == [1, 2])
    #expect(entries.first?.frames == ["Shop.Order.payment", "Shop.Payment.order"])
    // Through the file's text and back: the known census leaks no longer fail the gate.
    let reread = try Baseline.parse(baseline.serialized(), path: "b.json")
    #expect(reread == baseline)
    let judged = Gate(baseline: reread).evaluate(report)
    #expect(judged.passed)
    #expect(judged.processLeaks?.known == 3)
    #expect(judged.processLeaks?.sentence.contains("3 more in the baseline") == true)
    #expect(judged.fixedBaselineEntries.isEmpty)
  }

  @Test func aNewCensusLeakFailsAgainstABaselineThatKnowsTheOthers() throws {
    let report = try report()
    var baseline = Baseline(recording: Gate().evaluate(report), path: "b.json")
    baseline.entries.removeAll { $0.id.hex == Self.orderID }
    // And one census finding fixed since the baseline was written.
    baseline.entries.append(
      FindingDigest(
        id: FindingID(parsing: "0000000fe11d")!, kind: .process(.leak), type: "Shop.Gone",
        count: 1, frames: []))
    let result = Gate(baseline: baseline).evaluate(report)
    #expect(!result.passed)
    #expect(result.processLeaks?.count == 1)
    #expect(result.processLeaks?.counted.map(\.group.id) == [Self.orderID])
    #expect(result.processLeaks?.counted.first?.baseline == .new)
    #expect(result.fixedBaselineEntries.map(\.id.hex) == ["0000000fe11d"])
    let text = GateTextRenderer().render(result)
    #expect(text.contains("new: not in the baseline"))
    #expect(text.contains("id fb73afc9ad01"))
    #expect(!text.contains("ROOT CYCLE: <VendorKit"))
    // A grown count counts its growth.
    var smaller = Baseline(recording: Gate().evaluate(report), path: "b.json")
    let vendor = try #require(smaller.entries.firstIndex { $0.id.hex == Self.vendorID })
    smaller.entries[vendor].count = 1
    let grown = Gate(baseline: smaller).evaluate(report)
    #expect(grown.processLeaks?.count == 1)
    #expect(grown.processLeaks?.counted.first?.baseline == .grown(baselineCount: 1))
  }

  @Test func aBaselineEntryOfAnotherKindIsRefused() throws {
    let report = try report()
    let entry = FindingDigest(
      id: FindingID(parsing: Self.orderID)!, kind: .leaked, type: "Shop.Order", count: 1,
      frames: [])
    let baseline = Baseline(entries: [entry], path: "b.json")
    #expect(throws: AnalysisError.self) {
      try baseline.checkKinds(
        against: report.findings, census: report.census.final?.programGroups ?? [])
    }
  }

  @Test func diffListsCensusFindingsNewAndGone() throws {
    let head = DiffSide(try report())
    let base = DiffSide(
      inputs: ["base"], isSavedReport: false,
      findings: head.findings.filter { $0.id.hex != Self.orderID }
        + [
          FindingDigest(
            id: FindingID(parsing: "0000000fe11d")!, kind: .process(.leak), type: "Shop.Gone",
            count: 1, frames: [])
        ], falseLeaks: [:])
    let diff = FindingsDiff(base: base, head: head)
    #expect(diff.new.map(\.id.hex) == [Self.orderID])
    #expect(diff.gone.map(\.id.hex) == ["0000000fe11d"])
    #expect(diff.hasNewFindings)
    let text = DiffTextRenderer().render(diff)
    #expect(
      text.contains(
        "id:fb73afc9ad01 process leak (ROOT CYCLE): Shop.Order (cycle Shop.Order.payment →"
          + " Shop.Payment.order)"))
    // A saved JSON report's census leaks are read back with the same ids.
    let saved = try DiffSide.parseSavedReport(JSONRenderer().render(try report()), path: "r.json")
    #expect(saved.findings.filter(\.isProcess) == head.findings.filter(\.isProcess))
    // --library on a saved report leaves VendorKit's cycle out, as on logs.
    let library = try DiffSide.parseSavedReport(
      JSONRenderer().render(try report()), path: "r.json", libraryModules: [try Glob("Vendor*")])
    #expect(library.findings.filter(\.isProcess).map(\.id.hex) == [Self.orderID])
    #expect(
      DiffSide(try report(vendorOptions())).findings.filter(\.isProcess).map(\.id.hex)
        == [Self.orderID])
  }

  @Test func junitHasATestCasePerCensusFindingWithItsTree() throws {
    let report = try report()
    let list = try SuppressionList.parse("type:VendorKit.* vendor's bug", file: "s.txt")
    let xml = JUnitRenderer().render(Gate(suppressions: list).evaluate(report))
    let suite = try #require(try ParsedElement.parse(xml).child("testsuite"))
    let all = suite.children("testcase")
    let cases = all.filter {
      $0.attributes["classname"] == "dealloctrace.processLeak"
    }
    #expect(
      cases.map { $0.attributes["name"] } == [
        "Shop.Order [id:fb73afc9ad01]", "VendorKit.Session<Swift.String> [id:00000000c0de]",
      ])
    let failure = try #require(cases.first?.child("failure"))
    #expect(failure.text.contains("ROOT CYCLE: <Shop.Order 0x2000> [40]"))
    #expect(failure.text.contains("order --> CYCLE BACK TO <Shop.Order 0x2000> [40]"))
    #expect(cases.last?.children.first?.name == "skipped")
    let threshold = all.first {
      $0.attributes["name"] == "--max-process-leaks"
    }
    #expect(threshold?.children.first?.name == "failure")
  }

  @Test func githubAnnotatesEachNewCensusFindingEscaped() throws {
    let report = try report()
    var baseline = Baseline(recording: Gate().evaluate(report), path: "b.json")
    baseline.entries.removeAll { $0.id.hex == Self.orderID }
    let annotations = GitHubRenderer().annotations(Gate(baseline: baseline).evaluate(report))
    let errors = annotations.filter { $0.level == .error }
    #expect(errors.first?.message.contains("--max-process-leaks: 1 process leak") == true)
    #expect(
      errors.dropFirst().map(\.title) == [
        "dealloctrace: process leak (ROOT CYCLE): Shop.Order (×1) [id:fb73afc9ad01]"
      ])
    #expect(errors.last?.message.hasPrefix("New: not in the baseline.\n") == true)
    let notices = annotations.filter { $0.level == .notice }
    #expect(notices.contains { $0.title.contains("known: process leak (ROOT CYCLE): VendorKit") })
    // The tree's newlines and '%' are escaped as workflow data.
    let command = try #require(errors.last?.command)
    #expect(!command.contains("\n"))
    #expect(command.contains("%0A"))
  }

  @Test func libraryGlobsMakeAModulesGroupsLibraryLeaks() throws {
    let plain = try #require(try report().census.final)
    #expect(plain.programGroups.map(\.id) == [Self.orderID, Self.vendorID])
    let final = try #require(try report(vendorOptions()).census.final)
    #expect(final.programGroups.map(\.id) == [Self.orderID])
    #expect(final.libraryGroups.map(\.id) == [Self.vendorID, "0000000000ab"])
    #expect(final.leaked == 2)
    #expect(final.leakedBytes == 80)
    #expect(final.libraryLeaked == 3)
    #expect(final.libraryLeakedBytes == 200)
    // A glob that matches only part of a group's modules leaves it the program's.
    var swiftOnly = AnalysisOptions()
    swiftOnly.libraryModules = [try Glob("Shop")]
    let mixed = try #require(try report(swiftOnly).census.final)
    #expect(mixed.programGroups.map(\.id) == [Self.vendorID])
    #expect(
      CensusLibraries.modules(in: "VendorKit.Session<Swift.String>") == ["VendorKit", "Swift"])
    #expect(CensusLibraries.modules(in: "closure context (Shop.Cart, ?)") == ["Shop"])
    #expect(CensusLibraries.modules(in: "(other types)").isEmpty)
  }

  @Test func theGateNeverCountsLibraryLeaksUnlessAskedTo() throws {
    let report = try report(vendorOptions())
    var thresholds = GateThresholds()
    thresholds.maxProcessLeaks = 1
    let result = Gate(thresholds: thresholds).evaluate(report)
    #expect(result.passed)
    #expect(result.processLeaks?.library == 3)
    #expect(result.libraryLeaks == nil)
    thresholds.maxLibraryLeaks = 2
    let judged = Gate(thresholds: thresholds).evaluate(report)
    #expect(!judged.passed)
    #expect(judged.libraryLeaks?.count == 3)
    #expect(judged.libraryLeaks?.sentence == "3 library leaks (max 2): VendorKit ×2, XCTest ×1")
    #expect(
      GateTextRenderer().render(judged).contains(
        "FAIL  --max-library-leaks  3 library leaks (max 2)"))
    let json = GateJSONRenderer().render(judged)
    #expect(json.contains("\"libraryLeaks\""))
    #expect(json.contains("\"processLeaks\""))
  }

  @Test func theReportSaysWhichLibraryAndHowMuch() throws {
    let report = try report(vendorOptions())
    let text = TextRenderer().render(report)
    #expect(text.contains("    VendorKit: 2 groups, 2 objects, 64 bytes."))
    #expect(text.contains("    XCTest: 1 group, 1 object, 136 bytes."))
    let html = HTMLRenderer().render(report)
    let details = try #require(html.range(of: "<details class=\"library-leaks\">"))
    let program = try #require(html.range(of: "ROOT CYCLE: &lt;Shop.Order"))
    #expect(program.lowerBound < details.lowerBound)
    #expect(
      html[details.lowerBound...].contains("<li>VendorKit: 2 groups, 2 objects, 64 bytes</li>"))
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONRenderer().render(report).utf8))
        as? [String: Any])
    let census = try #require(json["census"] as? [String: Any])
    let libraries = census["libraries"] as? [[String: Any]] ?? []
    #expect(libraries.map { $0["module"] as? String } == ["VendorKit", "XCTest"])
    let libraryLeaks = census["libraryLeaks"] as? [[String: Any]] ?? []
    #expect(libraryLeaks.map { $0["library"] as? String } == ["VendorKit", "XCTest"])
  }

  @Test func explainShowsACensusFinding() throws {
    let report = try report()
    let text = try #require(
      CensusExplainRenderer().render(FindingID(parsing: Self.orderID)!, in: report.census))
    let lines = text.split(separator: "\n").map(String.init)
    #expect(
      lines.first == "Census finding id:fb73afc9ad01: ROOT CYCLE of Shop.Order, the program's leak")
    #expect(lines.contains("    Shop.Order --payment--> Shop.Payment"))
    #expect(lines.contains("    Shop.Payment --order--> Shop.Order"))
    #expect(lines.contains("      2 (80 bytes) ROOT CYCLE: <Shop.Order 0x2000> [40]"))
    // Both censuses found it: the checkpoint (whose id had the old 'L') and the exit.
    #expect(
      lines.contains {
        $0.hasPrefix("    census \"mid\" at ") && $0.hasSuffix(": ×1 (2 objects, 80 bytes)")
      })
    #expect(
      lines.contains {
        $0.hasPrefix("    census \"exit\" at ") && $0.hasSuffix(": ×1 (2 objects, 80 bytes)")
      })
    let vendor = try #require(
      CensusExplainRenderer().render(FindingID(parsing: Self.vendorID)!, in: report.census))
    #expect(
      vendor.split(separator: "\n").contains {
        $0.hasPrefix("    census \"mid\" at ") && $0.hasSuffix(": not found")
      })
    let library = try #require(
      CensusExplainRenderer().render(FindingID(parsing: "0000000000ab")!, in: report.census))
    #expect(library.contains("a library leak (XCTest; never counted by the gate)"))
    #expect(
      CensusExplainRenderer().render(FindingID(parsing: "123456789abc")!, in: report.census) == nil)
  }
}
