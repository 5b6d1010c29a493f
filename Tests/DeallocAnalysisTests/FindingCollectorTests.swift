import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// A finding keeps at most 32 distinct enqueue stacks; members with further stacks are
/// counted in an overflow variant that has no stack, so that a `frame:` suppression never
/// judges them by a stack that is not theirs.
@Suite struct FindingCollectorTests {
  /// 40 leaked survivors of one signature (the same three inner frames), each enqueued from
  /// its own outer caller `App.CallerN.run()`.
  static func report() throws -> Report {
    let inner = ["App.Model.close() -> ()", "App.Screen.close() -> ()", "App.Router.pop() -> ()"]
    var lines = [Line.session()]
    for n in 1...40 {
      // Distinct return addresses for the outer frame: they tell the stacks apart.
      let frames =
        inner.enumerated().map { #"{"ip":"0x\#($0.offset + 1)0","sym":"\#($0.element)"}"# }
        + [#"{"ip":"0x\#(String(0x9000 + n, radix: 16))","sym":"App.Caller\#(n).run() -> ()"}"#]
      lines.append(#"{"ev":"stack","id":\#(n),"frames":[\#(frames.joined(separator: ","))]}"#)
      lines.append(Line.enqueue(n, t: Int64(n) * 10, stack: n))
    }
    for n in 1...40 { lines.append(Line.release(n, t: 1000 + Int64(n), freed: false, rc: 1)) }
    lines.append(Line.end(t: 2000))
    return try TemporaryLog(lines).report()
  }

  @Test func stacksBeyondTheLimitGoToAnOverflowVariantWithoutAStack() throws {
    let finding = try #require(try Self.report().findings.first)
    #expect(finding.kind == .leaked)
    #expect(finding.count == 40)
    #expect(finding.stackVariants.count == FindingCollector.maximumVariants + 1)
    #expect(finding.stackVariants.prefix(32).allSatisfy { $0.count == 1 })
    let overflow = try #require(finding.stackVariants.last)
    #expect(overflow.key == FindingCollector.overflowKey)
    #expect(overflow.stack.isEmpty)
    #expect(overflow.count == 8)
    #expect(finding.stackVariants.reduce(0) { $0 + $1.count } == finding.count)
  }

  @Test func aFrameSuppressionOfTheLastKeptStackCoversOnlyItsOwnMember() throws {
    let list = try SuppressionList.parse("frame:App.Caller32.*  one caller\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(try Self.report())
    #expect(result.result(.leaked).suppressed == 1)
    #expect(result.result(.leaked).count == 39)
  }

  @Test func aTypeSuppressionStillCoversTheOverflow() throws {
    let list = try SuppressionList.parse("type:T.Node  known\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(try Self.report())
    #expect(result.result(.leaked).suppressed == 40)
    #expect(result.result(.leaked).count == 0)
  }

  @Test func membersWithoutExamplesCountInTheirVariant() {
    var collector = FindingCollector()
    let stack = [Frame(ip: 0x10, symbol: "App.f()")]
    let signature = Signature(type: "T", stack: stack)
    let example = FindingExample(
      session: 0, address: Address(1), type: "T", location: LogLocation(file: "f", line: 1))
    collector.add(.trueLeak, signature, stack: stack, example)
    collector.add(.trueLeak, signature, stack: stack, members: 41)
    let finding = collector.explained()[0]
    #expect(finding.count == 42)
    #expect(finding.examples.count == 1)
    #expect(finding.stackVariants.map(\.count) == [42])
  }
}
