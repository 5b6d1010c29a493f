import DeallocAnalysis
import DeallocLog
import Foundation
import Testing

/// The names a finding id hashes: each form that moves while the bug stays is normalised,
/// and each kind of plumbing frame is left out.
@Suite struct SymbolNormalizationTests {
  @Test(arguments: [
    // Closure numbers.
    (
      "closure #4 () -> () in Feed.FeedScreen.close() -> ()",
      "closure () -> () in Feed.FeedScreen.close() -> ()"
    ),
    (
      "implicit closure #12 (Feed.FeedTests) -> () throws -> () in Feed.FeedTests.f()",
      "implicit closure (Feed.FeedTests) -> () throws -> () in Feed.FeedTests.f()"
    ),
    (
      "closure #2 () -> () in closure #1 () -> () in Feed.load() -> ()",
      "closure () -> () in closure () -> () in Feed.load() -> ()"
    ),
    // Specialization and merge markers.
    (
      "generic specialization <Feed.Row, Swift.Int> of Feed.Cache.insert(A) -> ()",
      "Feed.Cache.insert(A) -> ()"
    ),
    (
      "function signature specialization <Arg[0] = Dead> of Feed.Cache.evict() -> ()",
      "Feed.Cache.evict() -> ()"
    ),
    ("merged Feed.Cache.evict() -> ()", "Feed.Cache.evict() -> ()"),
    ("specialized Feed.Cache.evict() -> ()", "Feed.Cache.evict() -> ()"),
    (
      "partial apply for closure #3 () -> () in Feed.FeedScreen.close() -> ()",
      "closure () -> () in Feed.FeedScreen.close() -> ()"
    ),
    // An unknown context's address.
    ("App.(unknown context at $5611c35a93ac).Order", "App.(unknown context).Order"),
    (
      "App.(unknown context at $5611c35a93ac).(unknown context at $7f00aa).Cell",
      "App.(unknown context).(unknown context).Cell"
    ),
    // Swift Testing's macro names, tied to the file and line.
    (
      "FeedTests.__🟡$s9FeedTests0014FeedTestsswift_DJFbfMX12_7_33Test4leaksyyYaKFfMu_() -> ()",
      "FeedTests.__🟡() -> ()"
    ),
    (
      "FeedTests.__macro_local_4testfMu0_.run() -> ()", "FeedTests.__macro_local_.run() -> ()"
    ),
    // Already stable names stay as they are.
    ("Feed.FeedScreen.close() -> ()", "Feed.FeedScreen.close() -> ()"),
    ("libFeed.so", "libFeed.so"),
  ])
  func eachMovingPartIsNormalised(_ name: String, _ expected: String) {
    #expect(SymbolNormalization.normalized(name) == expected)
  }

  @Test(arguments: [
    "implicit closure #4 (FeedTests.FeedTests) -> () throws -> () in static"
      + " FeedTests.FeedTests.__allTests__FeedTests : [(Swift.String, (FeedTests.FeedTests)"
      + " -> () throws -> ())]",
    "XCTest.XCTestCase.invokeTest() -> ()",
    "closure #1 () throws -> () in XCTest.XCTestCase.invokeTest() -> ()",
    "Testing.Test.run() async throws -> ()",
    "(extension in Testing):Testing.Runner.run() async -> ()",
    "$s9FeedTests0014FeedTestsswift_DJFbfMX12_7_33Test4leaksfMu_",
    "FeedTests.__🟡$s9FeedTests5leaksyyYaKFfMu_() async throws -> ()",
    "thunk for @escaping @callee_guaranteed () -> ()",
    "reabstraction thunk helper from @escaping @callee_guaranteed () -> ()",
    "protocol witness for Feed.Screen.close() -> () in conformance Feed.FeedScreen",
    "_dispatch_call_block_and_release", "__libc_start_main", "libXCTest.so", "libdispatch.so",
  ])
  func plumbingFramesAreLeftOut(_ symbol: String) {
    #expect(SymbolNormalization.isPlumbing(symbol))
    #expect(SymbolNormalization.programFrames([symbol, "Feed.f() -> ()"]) == ["Feed.f() -> ()"])
  }

  @Test(arguments: [
    ("closure #1 () throws -> () in XCTest.XCTestCase.invokeTest() -> ()", "XCTest"),
    ("static FeedTests.FeedTests.__allTests__FeedTests", "XCTest"),
    ("libXCTest.so", "XCTest"),
    ("(extension in Testing):Testing.Runner.run() async -> ()", "Swift Testing"),
    ("$s9FeedTests0014FeedTestsswift_DJFbfMX12_7_33Test4leaksfMu_", "Swift Testing"),
    ("lib_TestingInternals.so", "Swift Testing"),
    ("_dispatch_call_block_and_release", "libdispatch"),
    ("libdispatch.so", "libdispatch"),
    ("swift_task_run", "the Swift runtime"),
    ("libswift_Concurrency.so", "the Swift runtime"),
    ("libFoundation.so", "Foundation"),
    ("reabstraction thunk helper from @escaping @callee_guaranteed () -> ()", "compiler thunks"),
    ("generic specialization <Feed.Row> of thunk for @escaping () -> ()", "compiler thunks"),
    ("__libc_start_main", "libc"),
    (
      "generic specialization <Feed.Node> of Swift.Array.append(__owned A) -> ()",
      "the Swift standard library"
    ),
    (
      "closure #1 (A) -> () in (extension in Swift):Swift.Sequence.forEach((A) -> ()) -> ()",
      "the Swift standard library"
    ),
    ("Foundation.Thread.main() -> ()", "Foundation"),
  ])
  func eachPlumbingFrameNamesWhatItBelongsTo(_ symbol: String, _ category: String) {
    #expect(SymbolNormalization.plumbingCategory(symbol)?.name == category)
    #expect(SymbolNormalization.isPlumbing(symbol))
  }

  @Test(arguments: [
    "Feed.FeedScreen.close() -> ()", "closure #1 () -> () in Feed.load() -> ()", "main",
    "libFeed.so", "FeedTests.FeedTests.testClose() -> ()", "FeedTests.leaks() async throws -> ()",
    "SwiftFeed.Cache.insert() -> ()",
    "generic specialization <Swift.Int> of Feed.Cache.insert<A>(A) -> ()",
  ])
  func programFramesStay(_ symbol: String) {
    #expect(!SymbolNormalization.isPlumbing(symbol))
  }

  @Test func aForwarderAndItsClosureCountOnce() {
    let frames = SymbolNormalization.programFrames([
      "closure #1 () -> () in Feed.close() -> ()",
      "partial apply for closure #1 () -> () in Feed.close() -> ()",
      "Feed.close() -> ()",
    ])
    #expect(frames == ["closure () -> () in Feed.close() -> ()", "Feed.close() -> ()"])
  }

  // MARK: - Ids of whole logs

  /// A log of one leaked `type`, enqueued through `callers` (innermost first) below the
  /// queue's own frame, with `address` where the stack's first frame sits.
  static func log(type: String, callers: [String], address: UInt64 = 0x55d0_c0a1_0000) -> String {
    let symbols = ["DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()"] + callers
    let frames = symbols.enumerated().map { index, symbol in
      let escaped = symbol.replacingOccurrences(of: "\"", with: "\\\"")
      let ip = String(address + UInt64(index) * 0x100, radix: 16)
      return #"{"ip":"0x\#(ip)","mod":"/b/FeedTests","off":"0x\#(index)00","sym":"\#(escaped)"}"#
    }
    return [
      #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/b/FeedTests","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      #"{"ev":"stack","id":1,"frames":[\#(frames.joined(separator: ","))]}"#,
      #"{"ev":"enqueue","t":1000,"id":1,"obj":"0x600000e01000","type":"\#(type)","q":"shared","tid":7,"depth":1,"stack":1}"#,
      #"{"ev":"release","t":2000,"id":1,"tid":2,"freed":false,"rc":2}"#,
      #"{"ev":"end","t":3000,"why":"exit","pending":0,"lost":0}"#,
    ].joined(separator: "\n") + "\n"
  }

  func finding(_ log: String) throws -> Finding {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("dealloctrace-norm-\(UUID().uuidString).jsonl").path
    try Data(log.utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let findings = try DeallocAnalysis.analyze([path]).findings
    #expect(findings.count == 1)
    return try #require(findings.first)
  }

  /// XCTest's generated test list numbers its closures in declaration order: a test added
  /// above the leaking one renumbers the frame that calls it. Rule 1's ids moved (checked
  /// below); rule 2's do not.
  @Test func anUnrelatedXCTestMethodKeepsTheID() throws {
    func allTests(_ number: Int) -> String {
      "implicit closure #\(number) (FeedTests.FeedTests) -> () throws -> () in static"
        + " FeedTests.FeedTests.__allTests__FeedTests : [(Swift.String,"
        + " (FeedTests.FeedTests) -> () throws -> ())]"
    }
    func callers(_ number: Int) -> [String] {
      [
        "Feed.FeedScreen.close() -> ()", allTests(number),
        "thunk for @escaping @callee_guaranteed (@guaranteed FeedTests.FeedTests) -> (@error"
          + " @owned Swift.Error)",
        "XCTest.XCTestCase.invokeTest() -> ()",
      ]
    }
    let before = try finding(Self.log(type: "Feed.FeedViewModel", callers: callers(4)))
    let after = try finding(Self.log(type: "Feed.FeedViewModel", callers: callers(5)))
    #expect(before.id == after.id)
    #expect(legacyID(before) != legacyID(after))
    #expect(
      before.id
        == FindingID(
          kind: .leaked, type: "Feed.FeedViewModel", symbols: ["Feed.FeedScreen.close() -> ()"]))
  }

  /// Swift Testing's macro thunk carries a name made from the test's file and line.
  @Test func aMovedSwiftTestingTestKeepsTheID() throws {
    func callers(_ line: Int) -> [String] {
      [
        "Feed.FeedScreen.close() -> ()", "FeedTests.leaks() async throws -> ()",
        "$s9FeedTests0014FeedTestsswift_DJFbfMX\(line)_7_33Test4leaksfMu_",
      ]
    }
    let before = try finding(Self.log(type: "Feed.FeedViewModel", callers: callers(12)))
    let after = try finding(Self.log(type: "Feed.FeedViewModel", callers: callers(40)))
    #expect(before.id == after.id)
    #expect(legacyID(before) != legacyID(after))
  }

  /// A type declared in a function, named by the runtime with its context's address, which
  /// moves with ASLR in every run (a recorder that could not name the function wrote it).
  @Test func aFunctionLocalTypeKeepsItsIDAcrossRuns() throws {
    let callers = ["App.makeOrder() -> ()", "main"]
    let first = try finding(
      Self.log(type: "App.(unknown context at $5611c35a93ac).Order", callers: callers))
    let second = try finding(
      Self.log(
        type: "App.(unknown context at $55d00e1f13ac).Order", callers: callers,
        address: 0x55d0_0e1f_0000))
    #expect(first.id == second.id)
    #expect(legacyID(first) != legacyID(second))
  }

  /// Debug keeps a `partial apply` forwarder and the closure; release merges them and
  /// specialises the function: one id.
  @Test func debugAndReleaseFramesOfOneClosureGiveOneID() throws {
    let debug = try finding(
      Self.log(
        type: "Feed.Row",
        callers: [
          "closure #1 () -> () in Feed.Cache.evict(Feed.Row) -> ()",
          "partial apply for closure #1 () -> () in Feed.Cache.evict(Feed.Row) -> ()",
          "Feed.Cache.evict(Feed.Row) -> ()",
        ]))
    let release = try finding(
      Self.log(
        type: "Feed.Row",
        callers: [
          "partial apply for closure #1 () -> () in Feed.Cache.evict(Feed.Row) -> ()",
          "specialized Feed.Cache.evict(Feed.Row) -> ()",
        ]))
    #expect(debug.id == release.id)
    #expect(legacyID(debug) != legacyID(release))
  }

  /// The signature frames of the two leaks of Tests/PluginFixtures/LeakyPackage, as the
  /// recorder named them in a debug and a release `swift test` run
  /// (UserPackagePluginEndToEndTests): release spells XCTest's thunks `partial apply
  /// forwarder for …` and numbers the `@Test` thunk's resumption apart.
  static let xctestDebug = [
    "LeakyTests.LeakyXCTests.testClosingTheCartLeaksItsModel() -> ()",
    "implicit closure #2 () -> () in implicit closure #1 (LeakyTests.LeakyXCTests) -> () -> () in variable initialization expression of static (extension in LeakyPackagePackageDiscoveredTests):LeakyTests.LeakyXCTests.(__allTests__LeakyXCTests in _D0EA7E915539EEF2C861BEA5B94427DB) : Swift.Array<(Swift.String, (LeakyTests.LeakyXCTests) -> () -> ())>",
    "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
  ]
  static let xctestRelease = [
    "LeakyTests.LeakyXCTests.testClosingTheCartLeaksItsModel() -> ()",
    "partial apply forwarder for reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
    "partial apply forwarder for reabstraction thunk helper from @escaping @callee_guaranteed () -> (@out ()) to @escaping @callee_guaranteed () -> ()",
  ]
  static let swiftTestingDebug = [
    "LeakyTests.closingTheCheckoutLeaksIt() -> ()",
    "(1) suspend resume partial function for $s10LeakyTests25closingTheCheckoutLeaksIt4TestfMp_7__localfMu_ #1 @Sendable (isolated Swift.Optional<Swift.Actor>) async throws -> () in LeakyTests.($s10LeakyTests25closingTheCheckoutLeaksIt4TestfMp_17Z2b26c8118893b202fMu_ in _E4186D492944C1224BF9993FAD170FD3)@Sendable () async throws -> ()",
    "swift::runJobInEstablishedExecutorContext(swift::Job*)",
  ]
  static let swiftTestingRelease = [
    "LeakyTests.closingTheCheckoutLeaksIt() -> ()",
    "(2) suspend resume partial function for LeakyTests.($s10LeakyTests25closingTheCheckoutLeaksIt4TestfMp_17Z2b26c8118893b202fMu_ in _E4186D492944C1224BF9993FAD170FD3)@Sendable () async throws -> ()",
    "swift::runJobInEstablishedExecutorContext(swift::Job*)",
  ]

  @Test func aUserPackagesDebugAndReleaseFramesGiveOneID() {
    for (debug, release) in [
      (Self.xctestDebug, Self.xctestRelease), (Self.swiftTestingDebug, Self.swiftTestingRelease),
    ] {
      #expect(SymbolNormalization.programFrames(debug) == [debug[0]])
      #expect(SymbolNormalization.programFrames(release) == [release[0]])
      #expect(
        FindingID(kind: .leaked, type: "T", symbols: debug)
          == FindingID(kind: .leaked, type: "T", symbols: release))
    }
  }

  @Test func anAsyncResumptionIsItsFunction() {
    #expect(
      SymbolNormalization.normalized("(12) suspend resume partial function for App.load() -> ()")
        == "App.load() -> ()")
    #expect(
      SymbolNormalization.normalized("await resume partial function for App.load() -> ()")
        == "App.load() -> ()")
    #expect(SymbolNormalization.normalized("(draft) App.load()") == "(draft) App.load()")
  }

  /// A baseline written (by rule 2) before release forwarders were plumbing holds the id
  /// those frames gave then (f090ca6d31c3, from the release run): read now, its entry is
  /// hashed again from its frames and covers the finding.
  @Test func aRuleTwoBaselineEntryIsHashedAgainFromItsFrames() throws {
    let frames = Self.xctestRelease.map { "\"" + $0 + "\"" }.joined(separator: ", ")
    let text = """
      {"baselineVersion": 1, "idRule": 2, "findings": [
        {"id": "f090ca6d31c3", "kind": "leaked", "type": "LeakyTests.XCTestCartModel",
         "count": 1, "frames": [\(frames)]},
        {"id": "0123456789ab", "kind": "leaked", "type": "Hand.Written", "count": 1}
      ]}
      """
    let baseline = try Baseline.parse(text, path: "b.json")
    #expect(
      Set(baseline.entries.map(\.id)) == [
        FindingID(kind: .leaked, type: "LeakyTests.XCTestCartModel", symbols: Self.xctestDebug),
        FindingID(parsing: "0123456789ab")!,
      ])
  }

  func legacyID(_ finding: Finding) -> FindingID {
    FindingID.legacy(
      kind: finding.kind, type: finding.signature.type,
      symbols: finding.signature.frames.map(FindingID.stableName),
      holderKey: finding.signature.holderKey)
  }
}
