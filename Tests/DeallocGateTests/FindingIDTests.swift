import DeallocAnalysis
import DeallocLog
import Foundation
import TestSupport
import Testing

/// The finding id: SHA-256 against the standard's vectors, and an id that depends on the
/// code that enqueued a leak, never on where a build put it.
@Suite struct FindingIDTests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    // 1,000 bytes: several blocks, and a length that needs a second padding block.
    (
      String(repeating: "a", count: 1000),
      "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
    ),
  ])
  func sha256MatchesTheStandardVectors(_ message: String, _ digest: String) {
    #expect(SHA256.hexDigest(Array(message.utf8)) == digest)
  }

  /// Around the padding's boundaries: the length fits in the last block (55), needs a
  /// block of its own (56, 63), the message fills whole blocks (64, 120) or just more (65).
  @Test(arguments: [
    (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
    (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
    (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
    (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
    (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
    (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
    (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
  ])
  func sha256AroundThePaddingBoundaries(_ length: Int, _ digest: String) {
    let message = [UInt8](repeating: 0x61, count: length)
    #expect(SHA256.hexDigest(message) == digest)
    let digits = SHA256.digest(message).map {
      String($0 >> 4, radix: 16) + String($0 & 15, radix: 16)
    }
    #expect(digits.joined() == digest)
    #expect(SHA256.hexDigest(message, digits: FindingID.length) == String(digest.prefix(12)))
  }

  @Test func sha256OfEveryPaddingLengthIsDistinctAndFull() {
    // Lengths around the 55/56/64-byte padding boundaries each give a 64-digit digest.
    let digests = (50..<70).map { SHA256.hexDigest(Array(repeating: 0x61, count: $0)) }
    #expect(Set(digests).count == digests.count)
    #expect(digests.allSatisfy { $0.count == 64 })
  }

  /// A log with one leaked object, its enqueue stack at `base` (ips) and `offset` (module
  /// offsets), its object at `object`, in a binary built at `buildDirectory`.
  static func log(
    caller: String = "Feed.FeedScreen.close() -> ()", base: UInt64 = 0x55d0_c0a0_0000,
    offset: UInt64 = 0x10000, object: UInt64 = 0x6000_00e0_1000,
    buildDirectory: String = "/ci/work/feed/.build/debug", pid: Int = 5002, time: Int = 1_000_000,
    symbols: Bool = true
  ) -> String {
    func frame(_ index: UInt64, _ symbol: String, module: String = "\(buildDirectory)/Feed")
      -> String
    {
      let sym = symbols ? #","sym":"\#(symbol)""# : ""
      return
        #"{"ip":"0x\#(String(base + offset + index * 0x100, radix: 16))","mod":"\#(module)","off":"0x\#(String(offset + index * 0x100, radix: 16))"\#(sym)}"#
    }
    let frames = [
      frame(0, "DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()"),
      frame(1, caller),
      frame(2, "Feed.FeedTests.testClose() -> ()"),
    ].joined(separator: ",")
    return [
      #"{"ev":"session","v":1,"t":0,"pid":\#(pid),"exe":"\#(buildDirectory)/FeedTests","wall":"2026-11-29T19:00:00Z","delay_ms":100,"frames":8}"#,
      #"{"ev":"stack","id":1,"frames":[\#(frames)]}"#,
      #"{"ev":"enqueue","t":\#(time),"id":1,"obj":"0x\#(String(object, radix: 16))","type":"Feed.FeedViewModel","q":"shared","tid":\#(pid),"depth":1,"stack":1}"#,
      #"{"ev":"release","t":\#(time + 100_000_000),"id":1,"tid":2,"freed":false,"rc":2}"#,
      #"{"ev":"end","t":\#(time + 200_000_000),"why":"exit","pending":0,"lost":0}"#,
    ].joined(separator: "\n") + "\n"
  }

  func report(_ log: String) throws -> Report {
    let scratch = try ScratchDirectory("id")
    let path = scratch.url.appendingPathComponent("id.jsonl").path
    try Data(log.utf8).write(to: URL(fileURLWithPath: path))
    defer { scratch.remove() }
    return try DeallocAnalysis.analyze([path])
  }

  func ids(_ log: String) throws -> [FindingID] {
    try report(log).findings.map(\.id)
  }

  @Test func aBaselineOfFramesWithoutSymbolsIsTheSameAfterARebuild() throws {
    func baseline(_ log: String) throws -> String {
      Baseline(recording: Gate().evaluate(try report(log)), path: "b.json").serialized()
    }
    let first = try baseline(Self.log(symbols: false))
    let rebuilt = try baseline(Self.log(offset: 0x4_0000, buildDirectory: "/b", symbols: false))
    #expect(first == rebuilt)
    #expect(!first.contains("0x"))
    #expect(first.contains("\"Feed\""))
  }

  @Test func theIDSurvivesARebuildThatMovesEveryAddress() throws {
    let first = try ids(Self.log())
    let rebuilt = try ids(
      Self.log(
        base: 0x7f12_3400_0000, offset: 0x2_3456, object: 0x6000_00f0_9000,
        buildDirectory: "/home/dev/feed/.build/release", pid: 77, time: 9_000_000))
    #expect(first.count == 1)
    #expect(first == rebuilt)
    #expect(first[0].hex.count == FindingID.length)
  }

  @Test func theIDChangesWhenTheEnqueueSiteChanges() throws {
    let close = try ids(Self.log())
    let teardown = try ids(Self.log(caller: "Feed.FeedScreen.teardown() -> ()"))
    #expect(close != teardown)
  }

  @Test func framesWithoutSymbolsContributeTheirModuleFileNameOnly() throws {
    let first = try ids(Self.log(symbols: false))
    let rebuilt = try ids(
      Self.log(offset: 0x4_0000, buildDirectory: "/elsewhere/build", symbols: false))
    #expect(first == rebuilt)
    #expect(first != (try ids(Self.log())))
    #expect(
      FindingID.stableName(of: Frame(ip: 1, module: "/a/b/libFeed.so", offset: 9)) == "libFeed.so")
    #expect(FindingID.stableName(of: Frame(ip: 1)) == "?")
    #expect(
      FindingID.stableName(of: Frame(ip: 1, module: "/a/x", symbol: "f() -> ()")) == "f() -> ()")
  }

  @Test func everyPartOfTheSignatureCounts() {
    let base = FindingID(kind: .leaked, type: "A.B", symbols: ["f()", "g()"])
    let variants = [
      FindingID(kind: .stuck, type: "A.B", symbols: ["f()", "g()"]),
      FindingID(kind: .leaked, type: "A.C", symbols: ["f()", "g()"]),
      FindingID(kind: .leaked, type: "A.B", symbols: ["g()", "f()"]),
      FindingID(kind: .leaked, type: "A.B", symbols: ["f()g()"]),
      FindingID(kind: .leaked, type: "A.B", symbols: ["f()"]),
    ]
    #expect(Set(variants + [base]).count == variants.count + 1)
    // Deterministic: the same input, the same id, in any process (a fixed value).
    #expect(base == FindingID(kind: .leaked, type: "A.B", symbols: ["f()", "g()"]))
    #expect(base.hex == "b88e953d4a9d")
  }

  /// Rule 1's ids are still computed as they were (a fixed value from before rule 2), so
  /// that an old baseline's entries can be recognised, and differ from rule 2's.
  @Test func theOldRuleGivesTheIDsItGaveAndTheHolderKeyCountedInIt() {
    let old = FindingID.legacy(kind: .leaked, type: "A.B", symbols: ["f()", "g()"], holderKey: nil)
    #expect(old.hex == "4a3ad39036b9")
    #expect(
      old != FindingID.legacy(kind: .leaked, type: "A.B", symbols: ["f()", "g()"], holderKey: "h"))
    #expect(old != FindingID(kind: .leaked, type: "A.B", symbols: ["f()", "g()"]))
  }

  @Test(arguments: [
    ("3fa2c4e1b0d9", "3fa2c4e1b0d9"), ("3FA2C4E1B0D9", "3fa2c4e1b0d9"), ("3fa2c4e1b0d", nil),
    ("3fa2c4e1b0d9a", nil), ("3fa2c4e1b0dg", nil), ("", nil), ("3fa2c4e1b0d*", nil),
  ])
  func parsingAcceptsExactlyTwelveHexDigits(_ text: String, _ expected: String?) {
    #expect(FindingID(parsing: text)?.hex == expected)
  }

  @Test func anIDSuppressionCoversThatFindingOnly() throws {
    let report = try GateFixtures.report("leaks.jsonl")
    let target = try #require(report.findings.first { $0.signature.type == "Feed.FeedViewModel" })
    let list = try SuppressionList.parse(
      "id:\(target.id.hex.uppercased())   known, FEED-1\n", file: "s.txt")
    let result = Gate(suppressions: list).evaluate(report)
    #expect(result.suppressed.map(\.finding.id) == [target.id])
    #expect(result.suppressed.first?.suppressedBy?.pattern == "id:\(target.id.hex)")
    #expect(result.result(.leaked).count == 1)
    #expect(result.unusedSuppressions.isEmpty)
  }

  @Test(arguments: ["id:3fa2", "id:not-an-id", "id:3fa2c4e1b0d*"])
  func aMalformedIDSuppressionIsRefusedWithItsLine(_ line: String) {
    #expect {
      try SuppressionList.parse("# ids\n\(line) reason\n", file: "s.txt")
    } throws: { error in
      (error as? AnalysisError).map {
        $0.description.hasPrefix("s.txt:2: '") && $0.description.contains("is not a finding id")
      } ?? false
    }
  }
}
