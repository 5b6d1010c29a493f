import DeallocLog
import Testing

@testable import DeallocAnalysis

/// The JSON report's shape is written once, to a tree (``JSONRenderer/document(_:)``) or to
/// bytes (``JSONRenderer/render(_:)``): both must say the same thing, byte for byte.
@Suite struct JSONOutputTests {
  @Test(arguments: GoldenReportTests.fixtures + ["holders"])
  func theTreeAndTheStreamedBytesAgree(_ name: String) throws {
    let report = try Fixtures.report(["\(name).jsonl"])
    let renderer = JSONRenderer()
    let streamed = renderer.render(report)
    #expect(renderer.document(report).serialized(pretty: true) + "\n" == streamed)
    #expect(streamed.contains("\"reportVersion\": 1"))
  }

  /// The bytes the CLI writes out are the document.
  @Test(arguments: GoldenReportTests.fixtures + ["holders"])
  func theBytesWrittenOutAreTheDocument(_ name: String) throws {
    let report = try Fixtures.report(["\(name).jsonl"])
    let json = JSONRenderer().withBytes(of: report) { Array($0) }
    #expect(String(decoding: json, as: UTF8.self) == JSONRenderer().render(report))
    let text = TextRenderer().withBytes(of: report) { Array($0) }
    #expect(String(decoding: text, as: UTF8.self) == TextRenderer().render(report))
  }

  /// The byte buffer grows in place while it is not shared, and a copy stays a value: what
  /// one copy appends, growing past the shared capacity or not, the other never sees.
  @Test func aByteBufferGrowsInPlaceAndCopiesStayIndependent() {
    var buffer = JSONByteBuffer(capacity: 8)
    let run = Array(repeating: UInt8(ascii: "a"), count: 1_000)
    for _ in 0..<100 { run.withUnsafeBufferPointer { buffer.append(contentsOf: $0) } }
    #expect(buffer.count == 100_000)
    var copy = buffer
    let copies = JSONByteBuffer.CopyCount()
    JSONByteBuffer.$unsharingCopies.withValue(copies) {
      copy.append(UInt8(ascii: "b"))
      buffer.append(UInt8(ascii: "c"))
    }
    // The first append to a shared buffer copies; the second buffer is then its own.
    #expect(copies.count.load(ordering: .relaxed) == 1)
    for _ in 0..<200 { run.withUnsafeBufferPointer { copy.append(contentsOf: $0) } }
    #expect(
      buffer.bytes == Array(repeating: UInt8(ascii: "a"), count: 100_000) + [UInt8(ascii: "c")])
    #expect(copy.count == 300_001)
    #expect(copy.bytes[100_000] == UInt8(ascii: "b"))
    #expect(copy.bytes.filter { $0 != UInt8(ascii: "a") } == [UInt8(ascii: "b")])
  }

  @Test func aByteWriterPrintsWhatATreePrints() {
    let tree: JSONValue = .object([
      ("empty", .object([])), ("none", .array([])), ("n", .int(-9_223_372_036_854_775_808)),
      ("list", .array([.int(0), .string("a\"b"), .null, .double(1.5), .bool(false)])),
      ("nested", .object([("deep", .array([.object([("x", .int(1))])]))])),
    ])
    var bytes = JSONByteWriter()
    bytes.value(tree)
    #expect(String(decoding: bytes.bytes, as: UTF8.self) == tree.serialized(pretty: true))
    var streamed = JSONByteWriter()
    streamed.object { o in
      o.field("empty") { $0.object { _ in } }
      o.key("none")
      o.array([Int]()) { $0.int($1) }
      o.field("n", Int64.min)
      o.key("list")
      o.beginArray()
      o.int(0)
      o.string("a\"b")
      o.null()
      o.double(1.5)
      o.bool(false)
      o.endArray()
      o.field("nested") { o in
        o.object { o in
          o.key("deep")
          o.array([1]) { o, x in o.object { $0.field("x", x) } }
        }
      }
    }
    #expect(String(decoding: streamed.bytes, as: UTF8.self) == tree.serialized(pretty: true))
    var hex = JSONByteWriter()
    hex.array([0, 0x1f, UInt64.max]) { $0.hex($1) }
    #expect(
      String(decoding: hex.bytes, as: UTF8.self)
        == "[\n  \"0x0\",\n  \"0x1f\",\n  \"0xffffffffffffffff\"\n]")
  }
}

/// The byte writer repeats what it wrote for a shared array: the repeat must be the bytes a
/// tree prints at that depth, escapes included.
@Suite struct JSONSharedArrayTests {
  private static let frames = [
    Frame(ip: 0x10, module: "/app/\"Feed\"", offset: 0x10, symbol: "a\u{1B}b\u{202E}c"),
    Frame(ip: 0x20, symbol: "tab\there", file: "f\\g.swift", line: 7),
  ]

  /// A document with `frames` at two depths, each twice.
  private static func write<O: JSONOutput>(_ frames: [Frame], to o: inout O) {
    o.object { o in
      o.key("outer")
      o.array(shared: frames) { JSONRenderer.frame($1, to: &$0) }
      o.key("nested")
      o.array([0, 1]) { o, _ in
        o.object { o in
          o.key("stack")
          o.array(shared: frames) { JSONRenderer.frame($1, to: &$0) }
        }
      }
      o.key("again")
      o.array(shared: frames) { JSONRenderer.frame($1, to: &$0) }
    }
  }

  @Test func aRepeatedArrayIsWhatATreePrintsAtEachDepth() {
    var tree = JSONTreeBuilder()
    Self.write(Self.frames, to: &tree)
    var bytes = JSONByteWriter()
    Self.write(Self.frames, to: &bytes)
    let printed = String(decoding: bytes.bytes, as: UTF8.self)
    #expect(printed == tree.value.serialized(pretty: true))
    #expect(printed.contains("\"sym\": \"a\\u001bb\\u202ec\""))
    #expect(printed.contains("\"file\": \"f\\\\g.swift\""))
  }

  @Test func equalArraysInOtherStorageAndOtherArraysAreWrittenForThemselves() {
    // Same contents, new storage; then other contents written after the first.
    let copy = Self.frames.map { $0 }
    var other = Self.frames
    other[1].line = 8
    var bytes = JSONByteWriter()
    for frames in [Self.frames, copy, other, Self.frames] {
      bytes.array(shared: frames) { JSONRenderer.frame($1, to: &$0) }
    }
    // Four top-level values in a row: each as a tree prints it.
    var expected: [UInt8] = []
    for frames in [Self.frames, copy, other, Self.frames] {
      var one = JSONTreeBuilder()
      one.array(frames) { JSONRenderer.frame($1, to: &$0) }
      one.value.write(to: &expected, pretty: true, indent: 0)
    }
    #expect(bytes.bytes == expected)
    #expect(String(decoding: bytes.bytes, as: UTF8.self).contains("\"line\": 8"))
  }
}
