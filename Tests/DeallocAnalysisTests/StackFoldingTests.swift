import DeallocAnalysis
import DeallocLog
import Testing

/// A finding's stack in the outputs: the program's frames first, the test framework's,
/// libdispatch's and the compiler's frames folded into one line, every frame as recorded
/// with `allFrames`.
@Suite struct StackFoldingTests {
  /// The queue's frame, a program frame, an XCTest frame, a second program frame, then 13
  /// more frames of XCTest and libdispatch, innermost first: a leak found by a test.
  static let testStack =
    [
      "DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()",
      "Feed.FeedScreen.close() -> ()",
      "XCTest.XCTestCase.perform(XCTest.XCTestRun) -> ()",
      "Feed.FeedTests.testClose() -> ()",
    ]
    + (1...6).map { "closure #\($0) () -> () in XCTest.XCTestCase.invokeTest() -> ()" }
    + ["_dispatch_client_callout", "_dispatch_call_block_and_release"]
    + (1...5).map { "_dispatch_worker_thread\($0)" }

  /// The text report of one leaked object enqueued from `symbols`.
  private static func report(_ symbols: [String], allFrames: Bool = false) throws -> [String] {
    let log = try TemporaryLog([
      Line.session(), Line.stack(1, symbols: symbols),
      Line.enqueue(1, t: 1_000, type: "Feed.FeedViewModel", stack: 1),
      Line.release(1, t: 2_000, freed: false, rc: 2), Line.end(t: 3_000),
    ])
    var renderer = TextRenderer()
    renderer.allFrames = allFrames
    return renderer.render(try log.report()).split(
      separator: "\n", omittingEmptySubsequences: false
    )
    .map(String.init)
  }

  /// The lines from `enqueued at:` to the end of the finding.
  private static func stackLines(_ lines: [String]) throws -> [String] {
    let start = try #require(lines.firstIndex(of: "   enqueued at:"))
    return Array(lines[start...].prefix { !$0.isEmpty })
  }

  @Test func theProgramsFramesComeFirstAndTheTestFrameworksFoldIntoOneLine() throws {
    #expect(
      try Self.stackLines(Self.report(Self.testStack)) == [
        "   enqueued at:",
        "     Feed.FeedScreen.close() -> ()",
        "     Feed.FeedTests.testClose() -> ()",
        "     … 14 frames of XCTest and libdispatch",
      ])
  }

  @Test func programFramesPastTheLimitAreCountedBeforeTheFoldedLine() throws {
    let program = (1...10).map { "Feed.step\($0)() -> ()" }
    let lines = try Self.stackLines(
      Self.report(
        program + ["thunk for @escaping @callee_guaranteed () -> ()", "__libc_start_main"]))
    #expect(
      lines == ["   enqueued at:"] + program.prefix(8).map { "     " + $0 } + [
        "     … 2 more frames", "     … 2 frames of compiler thunks and libc",
      ])
  }

  @Test func allFramesListsEveryFrameAsRecorded() throws {
    #expect(
      try Self.stackLines(Self.report(Self.testStack, allFrames: true))
        == ["   enqueued at:"] + Self.testStack.map { "     " + $0 })
  }

  @Test(arguments: [
    // A name the recorder left mangled.
    ("$s4Feed0A6ScreenC5closeyyF", "Feed.FeedScreen.close() -> ()"),
    // Swift Testing's macro frame: the test function's name is a mangled identifier.
    (
      "static FeedTests.FeedTests.($s9FeedTestsAAV5leaks4TestfMp_17Z6a7a0d2aa0e18d8efMu_ in _2C80A643A7A128AAD5E39672A0FC0A48)@Sendable () async throws -> ()",
      "static FeedTests.FeedTests.(peer macro @Test expansion #1 of leaks in FeedTests.FeedTests in _2C80A643A7A128AAD5E39672A0FC0A48)@Sendable () async throws -> ()"
    ),
    // A merged specialization names the function, not the type it was merged on.
    (
      "merged generic specialization <Feed.NodeCell> of Feed.Cache.insert<A>(A) -> ()",
      "merged specialization of Feed.Cache.insert<A>(A) -> ()"
    ),
    (
      "merged specialized Feed.Cache.evict() -> ()",
      "merged specialization of Feed.Cache.evict() -> ()"
    ),
    // Names with nothing to demangle stay as they are.
    ("Feed.Price.$sign() -> ()", "Feed.Price.$sign() -> ()"),
  ])
  func framesAreShownDemangled(_ symbol: String, _ shown: String) throws {
    let lines = try Self.report(["Feed.Outer.run() -> ()", symbol], allFrames: true)
    #expect(try Self.stackLines(lines).last == "     " + shown)
  }
}
