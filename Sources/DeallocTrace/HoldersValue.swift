import CHolders
import TextEscaping

/// What a holder scan found for one object, as data: the `holders` record's HOLDERS-VALUE
/// (`docs/log-format.md`), copied out of the scanner's answer and written by the compact
/// JSON writer into the record.
///
/// Why copied and not kept as the scanner's C structure: that lives in tool memory freed
/// right after the scan, and the record is written later on the writer thread. Holders'
/// addresses are kept hidden (`HiddenAddress`): this value sits in ordinary memory that the
/// next scan reads. Names stay the process's bytes (a module path may be no valid UTF-8) and
/// are escaped by the C writers' rule (`cholders_json_escape`), so that a name reads the
/// same in a `holders` record as in a census's `growing`.
struct HoldersValue {
  enum Root {
    /// A global: its symbol when the module names one, else the word's offset in it.
    case global(symbol: [UInt8]?, offset: UInt, module: [UInt8])
    case stack(threadID: Int64?)
    case cycle
    case heap
    /// No root within the depth limit (the log's `none`).
    case unrooted
  }

  enum Reference {
    case unnamed
    case field([UInt8])
    case element(Int64, count: Int64)
    case captures([[UInt8]], more: Int64)
  }

  struct Step {
    var type: [UInt8]
    var hiddenObject: UInt
    var offset: UInt32
    var reference: Reference
  }

  struct Path {
    var root: Root
    var steps: [Step]
  }

  var direct: UInt64
  var more: UInt64
  var surplus: UInt64
  var scanMicroseconds: UInt64
  var paths: [Path]
}

extension HoldersValue {
  /// A copy of one target's answer; nil when the scanner did not find the target.
  init?(_ answer: cholders_holders) {
    guard answer.found != 0 else { return nil }
    direct = answer.direct
    more = answer.more
    surplus = answer.surplus
    scanMicroseconds = answer.scan_us
    paths = Self.buffer(answer.paths, answer.path_count).map { path in
      Path(
        root: Self.root(path.root),
        steps: Self.buffer(path.steps, path.step_count).map(Self.step))
    }
  }

  private static func buffer<Element>(_ start: UnsafePointer<Element>?, _ count: Int)
    -> UnsafeBufferPointer<Element>
  {
    UnsafeBufferPointer(start: count > 0 ? start : nil, count: count > 0 ? count : 0)
  }

  private static func bytes(_ text: cholders_text) -> [UInt8] {
    guard text.length > 0, let start = text.bytes else { return [] }
    return Array(UnsafeRawBufferPointer(start: start, count: text.length))
  }

  private static func root(_ root: cholders_root) -> Root {
    switch Int(root.kind) {
    case Int(CHOLDERS_ROOT_GLOBAL):
      .global(
        symbol: root.has_symbol != 0 ? bytes(root.symbol) : nil, offset: root.offset,
        module: bytes(root.module))
    case Int(CHOLDERS_ROOT_STACK): .stack(threadID: root.tid >= 0 ? root.tid : nil)
    case Int(CHOLDERS_ROOT_CYCLE): .cycle
    case Int(CHOLDERS_ROOT_HEAP): .heap
    default: .unrooted
    }
  }

  private static func step(_ step: cholders_step) -> Step {
    let reference: Reference =
      switch Int(step.kind) {
      case Int(CHOLDERS_STEP_FIELD): .field(bytes(step.field))
      case Int(CHOLDERS_STEP_ELEMENT): .element(step.element, count: step.count)
      case Int(CHOLDERS_STEP_CAPTURES):
        .captures(buffer(step.captures, step.capture_count).map(bytes), more: step.more_captures)
      default: .unnamed
      }
    return Step(
      type: bytes(step.type), hiddenObject: HiddenAddress.hide(step.object),
      offset: step.offset, reference: reference)
  }
}

extension HoldersValue {
  /// The value as a JSON object (`DeallocTrace.holdersJSON(of:others:)`).
  var json: String {
    var json = CompactJSON()
    json.object { writeMembers(into: &$0) }
    return String(decoding: json.bytes, as: UTF8.self)
  }

  /// The members of the value, into the object `json` is writing (a `holders` record).
  func writeMembers(into json: inout CompactJSON) {
    json.field("direct", direct)
    json.field("more", more)
    json.key("paths")
    json.beginArray()
    for path in paths {
      json.element()
      json.object { json in
        json.key("root")
        json.object { Self.write(path.root, into: &$0) }
        json.key("steps")
        json.beginArray()
        for step in path.steps {
          json.element()
          json.object { Self.write(step, into: &$0) }
        }
        json.endArray()
      }
    }
    json.endArray()
    if surplus > 0 { json.field("surplus", surplus) }
    json.field("scan_us", scanMicroseconds)
  }

  private static func write(_ root: Root, into json: inout CompactJSON) {
    switch root {
    case .global(let symbol, let offset, let module):
      json.field("kind", "global" as StaticString)
      if let symbol {
        json.field("sym", processText: symbol)
      } else {
        json.key("off")
        json.hex(UInt64(offset))
      }
      json.field("mod", processText: module)
    case .stack(let threadID):
      json.field("kind", "stack" as StaticString)
      if let threadID { json.field("tid", threadID) }
    case .cycle: json.field("kind", "cycle" as StaticString)
    case .heap: json.field("kind", "heap" as StaticString)
    case .unrooted: json.field("kind", "none" as StaticString)
    }
  }

  private static func write(_ step: Step, into json: inout CompactJSON) {
    json.field("type", processText: step.type)
    json.field("obj", hiddenHex: step.hiddenObject)
    json.field("off", step.offset)
    switch step.reference {
    case .unnamed: break
    case .field(let name): json.field("field", processText: name)
    case .element(let element, let count):
      json.field("element", element)
      json.field("count", count)
    case .captures(let names, let more):
      json.key("captures")
      json.beginArray()
      for name in names {
        json.element()
        json.string(processText: name)
      }
      json.endArray()
      if more > 0 { json.field("more_captures", more) }
    }
  }
}

extension CompactJSON {
  /// A string of bytes from the process, escaped by the C writers' rule
  /// (`cholders_json_escape`: each byte of no valid UTF-8 sequence as U+FFFD, every control
  /// as a `\u` escape), so that the recorder and the C writers spell a name alike.
  mutating func string(processText text: [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    text.withUnsafeBufferPointer { text in
      withUnsafeMutablePointer(to: &bytes) { out in
        cholders_json_escape(
          UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self), text.count,
          { context, chunk, length in
            guard let context, let chunk, length > 0 else { return }
            context.assumingMemoryBound(to: [UInt8].self).pointee.append(
              contentsOf: UnsafeRawBufferPointer(start: chunk, count: length))
          }, out)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  mutating func field(_ key: StaticString, processText text: [UInt8]) {
    self.key(key)
    string(processText: text)
  }
}
