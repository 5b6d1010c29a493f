import Foundation
import TestSupport
import Testing

/// `--all-frames` and the folded stacks of `report`, `check` and `explain`, run as a user
/// runs them on a log of two leaks found by tests: one under XCTest and libdispatch, one
/// under Swift Testing, with a merged specialization and names the recorder left mangled.
@Suite struct FrameFoldingEndToEndTests {
  static let log = "fixtures/test-framework-frames.jsonl"

  /// The XCTest leak's stack as every text output lists it by default.
  static let foldedXCTestStack = [
    "Feed.FeedScreen.close() -> ()",
    "merged specialization of Feed.Cache.insert<A>(A) -> ()",
    "Feed.FeedTests.testClose() -> ()",
    "… 8 frames of XCTest, libdispatch, compiler thunks and libc",
  ]

  /// The Swift Testing leak's: the @Test macro's thunk is Swift Testing's plumbing (the id
  /// rule's `TestfMp_`), folded with the rest.
  static let foldedSwiftTestingStack = [
    "Feed.ProfileScreen.close() -> ()",
    "… 4 frames of Swift Testing and the Swift runtime",
  ]

  /// Frames only `--all-frames` lists: the queue's, XCTest's by module and offset, a Swift
  /// Testing frame the recorder left mangled (`$s7Testing4TestV3runyyYaKF`), demangled, and
  /// the macro frame, which names the test, demangled.
  static let unfoldedOnly = [
    "DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()",
    "XCTest.XCTestCase.invokeTest() -> ()",
    "libXCTest.so+0x3000",
    "Testing.Test.run() async throws -> ()",
    "static FeedTests.FeedTests.(peer macro @Test expansion #1 of leaks in FeedTests.FeedTests"
      + " in _2C80A643A7A128AAD5E39672A0FC0A48)@Sendable () async throws -> ()",
  ]

  /// The output's lines, each without its indentation.
  private static func lines(_ arguments: [String], status: Int32 = 0) throws -> [String] {
    let run = try CLIRun.run(arguments)
    #expect(run.status == status, "\(run.standardError)")
    return run.standardOutput.split(separator: "\n").map {
      String($0.drop { $0 == " " })
    }
  }

  /// Whether `lines` hold `block` as consecutive lines.
  private static func contains(_ lines: [String], _ block: [String]) -> Bool {
    guard lines.count >= block.count else { return false }
    return (0...(lines.count - block.count)).contains {
      Array(lines[$0..<$0 + block.count]) == block
    }
  }

  @Test func theReportListsTheProgramsFramesFirstAndFoldsTheRest() throws {
    for format in ["text", "markdown"] {
      let lines = try Self.lines(["report", "--format", format, Self.log])
      #expect(Self.contains(lines, Self.foldedXCTestStack), "\(format)")
      #expect(Self.contains(lines, Self.foldedSwiftTestingStack), "\(format)")
      for frame in Self.unfoldedOnly { #expect(!lines.contains(frame), "\(format): \(frame)") }
      #expect(!lines.contains { $0.contains("$s") }, "\(format)")
    }
  }

  @Test func allFramesListsEveryFrameInTheReport() throws {
    for format in ["text", "markdown"] {
      let lines = try Self.lines(["report", "--format", format, "--all-frames", Self.log])
      for frame in Self.unfoldedOnly { #expect(lines.contains(frame), "\(format): \(frame)") }
      #expect(!lines.contains { $0.contains(" frames of ") }, "\(format)")
    }
  }

  @Test func theHTMLReportFoldsByDefaultAndListsEveryFrameWithAllFrames() throws {
    let folded = try CLIRun.run(["report", "--format", "html", Self.log])
    #expect(folded.status == 0)
    #expect(
      folded.standardOutput.contains(
        ">… 8 frames of XCTest, libdispatch, compiler thunks and libc<"))
    #expect(
      folded.standardOutput.contains(
        ">merged specialization of Feed.Cache.insert&lt;A&gt;(A) -&gt; ()<"))
    #expect(!folded.standardOutput.contains("XCTest.XCTestCase.invokeTest()"))
    let all = try CLIRun.run(["report", "--format", "html", "--all-frames", Self.log])
    #expect(all.status == 0)
    #expect(all.standardOutput.contains(">XCTest.XCTestCase.invokeTest() -&gt; ()<"))
    #expect(all.standardOutput.contains(">Testing.Test.run() async throws -&gt; ()<"))
    #expect(!all.standardOutput.contains(" frames of "))
  }

  @Test func allFramesListsEveryFrameInExplain() throws {
    let xcTest = try Self.lines(["explain", "--all-frames", Self.log, "Feed.FeedViewModel"])
    #expect(xcTest.contains("DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()  (queue/tracer)"))
    #expect(xcTest.contains("XCTest.XCTestCase.invokeTest() -> ()"))
    #expect(xcTest.contains("libXCTest.so+0x3000"))
    let testing = try Self.lines(["explain", "--all-frames", Self.log, "Feed.ProfileViewModel"])
    #expect(testing.contains("Testing.Test.run() async throws -> ()"))
    #expect(!(xcTest + testing).contains { $0.contains(" frames of ") })
  }

  @Test func explainFoldsByDefault() throws {
    let xcTest = try Self.lines(["explain", Self.log, "Feed.FeedViewModel"])
    #expect(Self.contains(xcTest, ["enqueue stack:"] + Self.foldedXCTestStack))
    let testing = try Self.lines(["explain", Self.log, "Feed.ProfileViewModel"])
    #expect(Self.contains(testing, ["enqueue stack:"] + Self.foldedSwiftTestingStack))
  }

  @Test func checkFoldsByDefaultAndListsEveryFrameWithAllFrames() throws {
    let folded = try Self.lines(["check", Self.log], status: 1)
    #expect(Self.contains(folded, ["enqueued at:"] + Self.foldedXCTestStack))
    let all = try Self.lines(["check", "--all-frames", Self.log], status: 1)
    for frame in Self.unfoldedOnly { #expect(all.contains(frame), "\(frame)") }
    #expect(!all.contains { $0.contains(" frames of ") })
  }

  @Test func theJSONKeepsEveryFrameAndMarksThePlumbing() throws {
    let run = try CLIRun.run(["report", "--format", "json", Self.log])
    #expect(run.status == 0)
    let object = try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8))
    let findings = try #require((object as? [String: Any])?["findings"] as? [[String: Any]])
    let stacks = findings.compactMap { $0["stack"] as? [[String: Any]] }
    let frames = stacks.flatMap { $0 }
    #expect(frames.count == 20)
    let marked = frames.filter { $0["plumbing"] != nil }.map { $0["sym"] as? String ?? "" }
    #expect(marked.count == 12)
    #expect(marked.contains("$s7Testing4TestV3runyyYaKF"))
    let programs = frames.filter { $0["plumbing"] == nil }.compactMap { $0["sym"] as? String }
    #expect(programs.contains("Feed.FeedScreen.close() -> ()"))
    #expect(programs.contains("DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()"))
  }
}
