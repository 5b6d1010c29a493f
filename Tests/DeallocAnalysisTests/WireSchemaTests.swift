import DeallocWire
import Testing

@testable import DeallocLog

/// The reader's two parsers agree with the wire schema (``WireSchema``), the one place the
/// recorder's writer takes its keys and order from: lines in the schema's order take the fast
/// path, and the general parser's packed keys are the schema's.
@Suite struct WireSchemaTests {
  /// A value of the type each key takes, as the recorder writes it.
  private static func value(of key: StaticString) -> String {
    switch "\(key)" {
    case "\(WireKey.object)": return #""0x7f0010""#
    case "\(WireKey.type)", "\(WireKey.queue)", "\(WireKey.reason)", "\(WireKey.label)":
      return #""App.Node""#
    case "\(WireKey.freed)", "\(WireKey.alive)": return "false"
    default: return "7"
    }
  }

  /// A line of `kind` with `fields` in the order given.
  private static func line(_ kind: StaticString, _ fields: [WireSchema.Field]) -> String {
    let members = fields.map { #","\#($0.key)":"# + value(of: $0.key) }.joined()
    return #"{"\#(WireKey.kind)":"\#(kind)""# + members + "}"
  }

  private static func takesTheFastPath(_ line: String) -> Bool {
    var interner = StringInterner()
    var bytes = Array(line.utf8)
    return bytes.withUnsafeMutableBufferPointer {
      RecorderShapeParser.parse(UnsafeBufferPointer($0), interner: &interner) != nil
    }
  }

  /// Every hot kind, with all its fields and with its required ones only, in the schema's
  /// order: the fast path reads it, and the general parser reads the same record.
  @Test func linesInTheSchemasOrderTakeTheFastPath() throws {
    for (kind, fields) in WireSchema.kinds {
      for chosen in [fields, fields.filter { !$0.isOptional }] {
        let text = Self.line(kind, chosen)
        #expect(Self.takesTheFastPath(text), "\(text)")
        var parser = RecordParser()
        var bytes = Array(text.utf8)
        let general = try bytes.withUnsafeMutableBufferPointer {
          try parser.parseAnyShape(UnsafeBufferPointer($0))
        }
        var interner = StringInterner()
        let fast = bytes.withUnsafeMutableBufferPointer {
          RecorderShapeParser.parse(UnsafeBufferPointer($0), interner: &interner)
        }
        #expect(fast == general, "\(text)")
      }
    }
  }

  /// Two adjacent fields swapped leave the schema's order, and the fast path declines the
  /// line: the check above can fail.
  @Test func aLineOutOfTheSchemasOrderLeavesTheFastPath() {
    for (kind, fields) in WireSchema.kinds {
      var swapped = fields
      swapped.swapAt(0, 1)
      let text = Self.line(kind, swapped)
      #expect(!Self.takesTheFastPath(text), "\(text)")
    }
  }

  /// The general parser's packed keys and kinds are the schema's.
  @Test func theGeneralParsersKeysAreTheSchemas() {
    typealias K = RecordParser.Key
    typealias R = RecordParser.Kind
    let pairs: [(StaticString, UInt64)] = [
      (WireKey.kind, K.ev), (WireKey.time, K.t), (WireKey.id, K.id), (WireKey.object, K.obj),
      (WireKey.type, K.type), (WireKey.queue, K.q), (WireKey.threadID, K.tid),
      (WireKey.depth, K.depth), (WireKey.stack, K.stack), (WireKey.retainCount, K.rc),
      (WireKey.freed, K.freed), (WireKey.drainCount, K.n), (WireKey.reason, K.why),
      (WireKey.alive, K.alive), (WireKey.label, K.label),
      (WireKind.enqueue, R.enqueue), (WireKind.release, R.release),
      (WireKind.dealloc, R.dealloc), (WireKind.drain, R.drain), (WireKind.check, R.check),
    ]
    for (name, packed) in pairs { #expect(JSONScanner.pack(name) == packed, "\(name)") }
  }
}
