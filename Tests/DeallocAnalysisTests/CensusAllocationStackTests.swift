import Foundation
import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// A census group's `allocStack` (DEALLOCTRACE_ALLOC_STACKS=1): read, shown under
/// "allocated at:" with the program's frames first in every report and in `explain`, and
/// written as the JSON report's `allocStack`.
@Suite struct CensusAllocationStackTests {
  static let session =
    #"{"ev":"session","v":1,"t":0,"pid":7,"exe":"/app/Shop","wall":"W","delay_ms":100,"frames":0}"#
  /// One cycle whose root was allocated through the runtime's allocator, in
  /// `Shop.Order.__allocating_init()`, called by `Shop.checkout()`.
  static let census =
    #"{"ev":"census","t":20,"tid":7,"label":"exit","objects":3,"bytes":120,"leaked":2,"leaked_bytes":80,"library_leaked":0,"library_leaked_bytes":0,"delayed_objects":0,"groups":[{"id":"fb73afc9ad01","kind":"cycle","instances":1,"count":2,"bytes":80,"members":[{"type":"Shop.Order","count":1,"bytes":40},{"type":"Shop.Payment","count":1,"bytes":40}],"edges":[{"type":"Shop.Order","field":"payment"},{"type":"Shop.Payment","field":"order"}],"tree":[{"depth":0,"type":"Shop.Order","obj":"0x2000","size":40,"count":2,"bytes":80},{"depth":1,"type":"Shop.Payment","obj":"0x2100","size":40,"via":"payment","count":1,"bytes":40},{"depth":2,"type":"Shop.Order","obj":"0x2000","size":40,"via":"order","back":true}],"allocStack":[{"ip":"0x7f0000001000","mod":"/usr/lib/swift/linux/libswiftCore.so","off":"0x1000","sym":"swift_allocObject"},{"ip":"0x5000","mod":"/app/Shop","off":"0x5000","sym":"Shop.Order.__allocating_init() -> Shop.Order"},{"ip":"0x5100","mod":"/app/Shop","off":"0x5100","sym":"Shop.checkout() -> ()"}]}],"delayed":[],"live":[],"allocStacks":{"recorded":40,"dropped":3,"objects":30},"threads_stopped":1,"threads_unstopped":0,"census_us":900}"#
  static let end = #"{"ev":"end","t":30,"why":"exit","pending":0,"lost":0}"#
  /// The group's last line, after its allocation stack.
  static let footer =
    "    cycle: Shop.Order.payment → Shop.Payment.order → Shop.Order; id fb73afc9ad01"

  private func report() throws -> Report {
    var reader = LogReader()
    var analyzer = Analyzer()
    let log = try TemporaryLog([Self.session, Self.census, Self.end])
    try reader.read([LogInput(path: log.path, displayName: "census.jsonl")], into: &analyzer)
    return analyzer.finish(inputs: ["census.jsonl"])
  }

  @Test func theStackAndTheCountsAreRead() throws {
    let final = try #require(try report().census.final)
    let stack = try #require(final.groups.first?.allocationStack)
    #expect(
      stack.map(\.symbol) == [
        "swift_allocObject", "Shop.Order.__allocating_init() -> Shop.Order",
        "Shop.checkout() -> ()",
      ])
    #expect(stack.last?.offset == 0x5100)
    #expect(final.allocationStacks == AllocationStackCounts(recorded: 40, dropped: 3, objects: 30))
  }

  /// The text report: the program's frames under "allocated at:", the allocator left out.
  @Test func theTextReportShowsAllocatedAt() throws {
    let text = TextRenderer().render(try report())
    let lines = text.split(separator: "\n").map(String.init)
    let heading = try #require(lines.firstIndex(of: "    allocated at:"), "\(text)")
    #expect(
      Array(lines[(heading + 1)...].prefix(2)) == [
        "      Shop.Order.__allocating_init() -> Shop.Order", "      Shop.checkout() -> ()",
      ])
    #expect(!text.contains("swift_allocObject"))
  }

  /// A root allocated under a test: the test framework's frames fold into one line after
  /// the program's, as under a finding; `allFrames` lists every frame, the allocator's too.
  @Test func theTestFrameworksAllocationFramesFold() throws {
    let underTest = Self.census.replacingOccurrences(
      of: #""sym":"Shop.checkout() -> ()"}]"#,
      with: #""sym":"Shop.checkout() -> ()"},"#
        + #"{"ip":"0x6000","sym":"XCTest.XCTestCase.invokeTest() -> ()"},"#
        + #"{"ip":"0x6100","mod":"/usr/lib/swift/linux/libXCTest.so","off":"0x100"},"#
        + #"{"ip":"0x6200","sym":"_dispatch_client_callout"}]"#)
    #expect(underTest != Self.census)
    var reader = LogReader()
    var analyzer = Analyzer()
    let log = try TemporaryLog([Self.session, underTest, Self.end])
    try reader.read([LogInput(path: log.path, displayName: "census.jsonl")], into: &analyzer)
    let report = analyzer.finish(inputs: ["census.jsonl"])
    let lines = TextRenderer().render(report).split(separator: "\n").map(String.init)
    let heading = try #require(lines.firstIndex(of: "    allocated at:"))
    #expect(
      Array(lines[(heading + 1)...].prefix(4)) == [
        "      Shop.Order.__allocating_init() -> Shop.Order", "      Shop.checkout() -> ()",
        "      … 3 frames of XCTest and libdispatch", Self.footer,
      ])
    var all = TextRenderer()
    all.allFrames = true
    let every = all.render(report).split(separator: "\n").map(String.init)
    let start = try #require(every.firstIndex(of: "    allocated at:"))
    #expect(
      Array(every[(start + 1)...].prefix(7)) == [
        "      swift_allocObject", "      Shop.Order.__allocating_init() -> Shop.Order",
        "      Shop.checkout() -> ()", "      XCTest.XCTestCase.invokeTest() -> ()",
        "      libXCTest.so+0x100", "      _dispatch_client_callout", Self.footer,
      ])
  }

  @Test func markdownHTMLAndExplainShowIt() throws {
    let report = try report()
    #expect(MarkdownRenderer().render(report).contains("      Shop.checkout() -> ()"))
    #expect(HTMLRenderer().render(report).contains("allocated at:\n      Shop.Order"))
    let id = try #require(FindingID(parsing: "fb73afc9ad01"))
    let explained = try #require(CensusExplainRenderer().render(id, in: report.census))
    #expect(explained.contains("allocated at:"), "\(explained)")
    #expect(explained.contains("Shop.checkout() -> ()"), "\(explained)")
  }

  @Test func theJSONReportHasTheFrames() throws {
    let json = JSONRenderer().render(try report())
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let census = try #require(document["census"] as? [String: Any])
    let leak = try #require((census["leaks"] as? [[String: Any]])?.first)
    let frames = try #require(leak["allocStack"] as? [[String: Any]])
    #expect(frames.map { $0["sym"] as? String }.last == "Shop.checkout() -> ()")
    #expect(frames.last?["off"] as? String == "0x5100")
    #expect(leak["allocSampleEvery"] == nil, "an unsampled run's report has no rate")
  }

  /// A record without `allocStack` reads as before: no frames, no heading.
  @Test func aRecordWithoutItReadsAsBefore() throws {
    let plain = Self.census.replacingOccurrences(
      of: #","allocStack":[{"ip":"0x7f0000001000""#, with: #","x":[{"ip":"0x7f0000001000""#)
    var reader = LogReader()
    var analyzer = Analyzer()
    let log = try TemporaryLog([Self.session, plain, Self.end])
    try reader.read([LogInput(path: log.path, displayName: "census.jsonl")], into: &analyzer)
    let report = analyzer.finish(inputs: ["census.jsonl"])
    #expect(report.census.final?.groups.first?.allocationStack == [])
    #expect(!TextRenderer().render(report).contains("allocated at:"))
  }

  /// A sampled run (`allocStacks.sampleEvery`): the counts keep the rate, a root with a stack
  /// says it was sampled, and a root without one says it was not sampled, in every report.
  @Test func samplingIsStated() throws {
    let sampled = Self.census.replacingOccurrences(
      of: #""objects":30}"#, with: #""objects":30,"sampleEvery":100}"#)
    let unsampled = sampled.replacingOccurrences(
      of: #","allocStack":[{"ip":"0x7f0000001000""#, with: #","x":[{"ip":"0x7f0000001000""#)
    func report(_ census: String) throws -> Report {
      var reader = LogReader()
      var analyzer = Analyzer()
      let log = try TemporaryLog([Self.session, census, Self.end])
      try reader.read([LogInput(path: log.path, displayName: "census.jsonl")], into: &analyzer)
      return analyzer.finish(inputs: ["census.jsonl"])
    }
    let withStack = try report(sampled)
    #expect(withStack.census.final?.allocationStacks?.sampleEvery == 100)
    let text = TextRenderer().render(withStack)
    #expect(text.contains("    allocated at (sampled 1 in 100):\n      Shop.Order"), "\(text)")
    let without = try report(unsampled)
    #expect(
      TextRenderer().render(without).contains("    allocation not sampled (sampled 1 in 100)"))
    #expect(
      MarkdownRenderer().render(without).contains("allocation not sampled (sampled 1 in 100)"))
    #expect(HTMLRenderer().render(without).contains("allocation not sampled (sampled 1 in 100)"))
    let json = JSONRenderer().render(without)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    let leak = try #require(
      ((document["census"] as? [String: Any])?["leaks"] as? [[String: Any]])?.first)
    #expect(leak["allocSampleEvery"] as? Int == 100, "\(leak)")
    #expect(leak["allocStack"] as? [Any] == nil || (leak["allocStack"] as? [Any])?.isEmpty == true)
    // Unsampled runs say nothing of sampling.
    #expect(!TextRenderer().render(try self.report()).contains("sampled"))
  }
}
