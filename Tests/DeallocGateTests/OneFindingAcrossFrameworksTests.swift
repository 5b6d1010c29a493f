import DeallocLog
import Foundation
import Testing

@testable import DeallocAnalysis

/// One leak made in a helper that an XCTest method and a Swift Testing `@Test` function both
/// call is one bug (issue 28, item 2): one finding, ×2, whose occurrences name each session
/// and reach each test through their stacks, not one finding per test framework.
///
/// `fixtures/gate/two-frameworks.jsonl` holds two sessions of one test bundle, with frames as
/// the recorder named them in a debug `swift test` run of `Tests/PluginFixtures/LeakyPackage`
/// (UserPackagePluginEndToEndTests): `closeTheCartAndDropIt` leaks a `CartModel`, called by
/// the XCTest method (through XCTest's generated test list) in the first session and by the
/// `@Test` function (through Swift Testing's macro thunk) in the second.
@Suite struct OneFindingAcrossFrameworksTests {
  static let fixture = "fixtures/gate/two-frameworks.jsonl"
  static let helper = "LeakyTests.closeTheCartAndDropIt(LeakyTests.CartScreen) -> ()"
  static let xcTest = "LeakyTests.LeakyXCTests.testClosingTheCartLeaksItsModel() -> ()"
  static let swiftTesting = "LeakyTests.closingTheCartLeaksItsModel() -> ()"

  func report() throws -> Report {
    try DeallocAnalysis.analyze([GateFixtures.root.appendingPathComponent(Self.fixture).path])
  }

  @Test func aLeakInAHelperBothFrameworksCallIsOneFinding() throws {
    let report = try report()
    #expect(report.findings.count == 1, "\(report.findings.map(\.signature.key))")
    let finding = try #require(report.findings.first)
    #expect(finding.kind == .leaked)
    #expect(finding.count == 2)
    #expect(finding.examples.map(\.session) == [0, 1])
    // Each occurrence keeps its own stack, so each test is still named.
    let tests = finding.stackVariants.map { $0.stack.map(FindingID.stableName) }
    #expect(tests.count == 2)
    #expect(tests.first?.contains(Self.xcTest) == true, "\(tests)")
    #expect(tests.last?.contains(Self.swiftTesting) == true, "\(tests)")
    // The id is the helper's: the test function that calls it is left out.
    #expect(
      finding.id
        == FindingID(kind: .leaked, type: "LeakyTests.CartModel", symbols: [Self.helper]))
  }

  /// A baseline of the XCTest run covers the same leak seen from Swift Testing.
  @Test func aBaselineOfOneFrameworkCoversTheOther() throws {
    let report = try report()
    let finding = try #require(report.findings.first)
    let xcTestEntry = FindingDigest(
      id: FindingID(kind: .leaked, type: "LeakyTests.CartModel", symbols: []),
      kind: .leaked, type: "LeakyTests.CartModel", count: 2,
      frames: finding.stackVariants[0].stack.dropFirst().prefix(Signature.depth)
        .map(FindingID.stableName))
    let read = try Baseline.parse(
      Baseline(entries: [xcTestEntry], path: "b.json").serialized(), path: "b.json")
    let result = Gate(baseline: read).evaluate(report)
    let passed = result.passed
    #expect(passed, "\(GateTextRenderer().render(result))")
    #expect(result.fixedBaselineEntries.isEmpty)
  }

  /// An `id:` suppression written by rule 2 named the XCTest finding by the id it had then
  /// (8cbbc007513f, which kept the test method): it still covers the merged finding.
  @Test func aRuleTwoIDSuppressionStillCoversTheFinding() throws {
    let report = try report()
    let finding = try #require(report.findings.first)
    #expect(finding.ruleTwoID.hex == "8cbbc007513f")
    let suppressions = try SuppressionList.parse(
      "id:8cbbc007513f  # the cart leak, fixed in #12\n", file: "s.txt")
    let result = Gate(suppressions: suppressions).evaluate(report)
    let passed = result.passed
    #expect(passed, "\(GateTextRenderer().render(result))")
  }

  /// The test function is left out only when a program frame lies inside it, in debug and
  /// release spellings alike; a leak made in the test itself keeps it.
  @Test func theTestFunctionIsLeftOutOnlyBelowAHelper() {
    typealias Frames = SymbolNormalizationTests
    for test in [
      Frames.xctestDebug, Frames.xctestRelease, Frames.swiftTestingDebug,
      Frames.swiftTestingRelease,
    ] {
      #expect(SymbolNormalization.programFrames([Self.helper] + test) == [Self.helper])
      #expect(SymbolNormalization.programFrames(test) == [test[0]])
    }
    // A program frame called from libdispatch is not a test: it stays.
    #expect(
      SymbolNormalization.programFrames([
        Self.helper, "Feed.load() -> ()", "_dispatch_call_block_and_release",
      ]) == [Self.helper, "Feed.load() -> ()"])
  }
}
