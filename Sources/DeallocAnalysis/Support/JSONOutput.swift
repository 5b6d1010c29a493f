import DeallocLog
import TextEscaping

/// Where a renderer writes a JSON document, part by part in document order: into a
/// ``JSONValue`` tree (``JSONTreeBuilder``, for tools that embed the document) or straight
/// into pretty-printed bytes (``JSONByteWriter``, for output).
///
/// Why both behind one interface: the report's shape is written once, and a leak-heavy
/// report's document is tens of megabytes, where building a tree only to print and free it
/// was most of the time spent rendering. The byte writer prints exactly what
/// ``JSONValue/serialized(pretty:)`` prints for the same document.
protocol JSONOutput {
  mutating func beginObject()
  mutating func endObject()
  mutating func beginArray()
  mutating func endArray()
  /// The name of the next member of the object being written, as the code spells it.
  mutating func key(_ name: StaticString)
  /// The name of the next member of the object being written, from data (a summary's
  /// counts, a record kind from the log).
  mutating func key(named name: String)
  mutating func null()
  mutating func bool(_ value: Bool)
  mutating func int(_ value: Int64)
  mutating func double(_ value: Double)
  mutating func string(_ value: String)
  /// `value` as a string of lower-case hex with the `0x` prefix, as the log writes addresses.
  mutating func hex(_ value: UInt64)
  /// A value built elsewhere as a tree.
  mutating func value(_ value: JSONValue)
  /// `elements` as an array of what `element` writes for each, like ``array(_:_:)``, for
  /// arrays that many parts of a document share (a stack, in every group it starts).
  ///
  /// Implementation requirements: the document must be what ``array(_:_:)`` writes. A writer
  /// may repeat what it wrote for the same array storage at the same depth instead of
  /// calling `element` again, so a caller passes one `element` per kind of array.
  mutating func array<Element>(
    shared elements: [Element], _ element: (inout Self, Element) -> Void)
}

extension JSONOutput {
  mutating func object(_ members: (inout Self) -> Void) {
    beginObject()
    members(&self)
    endObject()
  }

  mutating func array<Elements: Sequence>(
    _ elements: Elements, _ element: (inout Self, Elements.Element) -> Void
  ) {
    beginArray()
    for item in elements { element(&self, item) }
    endArray()
  }

  mutating func int(_ value: Int) { int(Int64(value)) }

  mutating func string(_ value: String?) {
    if let value { string(value) } else { null() }
  }

  mutating func int(_ value: Int64?) {
    if let value { int(value) } else { null() }
  }

  mutating func int(_ value: Int?) {
    if let value { int(Int64(value)) } else { null() }
  }

  /// `key` and a string (or `null`).
  mutating func field(_ key: StaticString, _ value: String?) {
    self.key(key)
    string(value)
  }

  /// `key` and an integer (or `null`).
  mutating func field(_ key: StaticString, _ value: Int64?) {
    self.key(key)
    int(value)
  }

  /// `key` and an integer (or `null`).
  mutating func field(_ key: StaticString, _ value: Int?) {
    self.key(key)
    int(value)
  }

  /// `key` and an address-style hex string (or `null`).
  mutating func hexField(_ key: StaticString, _ value: UInt64?) {
    self.key(key)
    if let value { hex(value) } else { null() }
  }

  mutating func field(_ key: StaticString, _ value: Bool) {
    self.key(key)
    bool(value)
  }

  /// `key`, then whatever `value` writes.
  mutating func field(_ key: StaticString, _ value: (inout Self) -> Void) {
    self.key(key)
    value(&self)
  }
}

/// Pretty-printed JSON bytes, two spaces per level, as ``JSONValue/serialized(pretty:)``.
struct JSONByteWriter: JSONOutput {
  private var out: JSONByteBuffer
  /// How many containers are open.
  private var depth = 0
  /// Whether each open container has a member or element yet, the innermost in the lowest
  /// bit: the stack a writer consults at every entry, kept in a register. Containers nested
  /// deeper than its bits spill their outer bits into ``spilledHasEntries``.
  private var hasEntries: UInt64 = 0
  private var spilledHasEntries: [Bool] = []
  /// A key was just written: the next value follows it on its line.
  private var afterKey = false
  /// Where ``repeatedBytes`` holds what a shared array (by storage and depth) was written as.
  private var sharedArrays: [SharedArray: Range<Int>] = [:]
  private var repeatedBytes: [UInt8] = []
  /// The arrays of ``sharedArrays``, kept alive so that no other array takes their storage.
  private var pinned: [Any] = []

  /// An array's storage at a depth.
  private struct SharedArray: Hashable {
    var storage: UnsafeRawPointer
    var depth: Int
  }

  init(capacity: Int = 0) {
    out = JSONByteBuffer(capacity: capacity)
  }

  /// The document so far.
  var bytes: [UInt8] { out.bytes }

  /// The document and the line break a file ends with, lent to `body`.
  mutating func withLine<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    out.append(UInt8(ascii: "\n"))
    return withBytes(body)
  }

  /// The bytes written so far, lent to `body`.
  func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    out.withUnsafeBytes(body)
  }

  /// The separator and indentation before a value in an array (a member's came with its key).
  @inline(__always)
  private mutating func beginValue() {
    if afterKey {
      afterKey = false
      return
    }
    nextEntry()
  }

  @inline(__always)
  private mutating func nextEntry() {
    guard depth > 0 else { return }
    if takeEntry() { out.append(UInt8(ascii: ",")) }
    JSONValue.newline(&out, depth)
  }

  /// Counts one more entry of the innermost container; whether one came before it (then a
  /// comma separates them).
  @inline(__always)
  private mutating func takeEntry() -> Bool {
    let hadEntries = hasEntries & 1 != 0
    hasEntries |= 1
    return hadEntries
  }

  private mutating func open(_ bracket: UInt8) {
    out.append(bracket)
    if depth >= UInt64.bitWidth { spilledHasEntries.append(hasEntries >> 63 != 0) }
    hasEntries <<= 1
    depth += 1
  }

  private mutating func close(_ bracket: UInt8) {
    let hadEntries = hasEntries & 1 != 0
    hasEntries >>= 1
    depth -= 1
    if depth >= UInt64.bitWidth, spilledHasEntries.removeLast() { hasEntries |= 1 << 63 }
    if hadEntries { JSONValue.newline(&out, depth) }
    out.append(bracket)
  }

  mutating func beginObject() {
    beginValue()
    open(UInt8(ascii: "{"))
  }

  mutating func endObject() { close(UInt8(ascii: "}")) }

  mutating func beginArray() {
    beginValue()
    open(UInt8(ascii: "["))
  }

  mutating func endArray() { close(UInt8(ascii: "]")) }

  /// Writes the literal as it is, unescaped: the report's keys are plain ASCII names, and
  /// scanning each for escapes cost more than writing it. Debug builds check; the tests that
  /// compare this writer with the tree (which escapes every key) would show a key that
  /// needed escaping.
  ///
  /// The whole line (separator, indentation, quoted name, colon) is written into one
  /// reservation: a report is mostly keys, and piece by piece each key cost five checks of
  /// the buffer's room.
  mutating func key(_ name: StaticString) {
    let name = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    assert(!name.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x7F })
    afterKey = true
    guard depth > 0, 2 * depth <= JSONValue.deepestInlineIndent else {
      // The document's own key, or one too deep for the shared indentation: rare.
      nextEntry()
      out.append(UInt8(ascii: "\""))
      out.append(contentsOf: name)
      JSONValue.append(Self.endOfKey, to: &out)
      return
    }
    let separator = takeEntry()
    let line = JSONValue.lineBreakAndIndent(depth)
    out.append(maximum: 1 + line.count + 1 + name.count + 3) { to in
      var at = 0
      if separator {
        to[0] = UInt8(ascii: ",")
        at = 1
      }
      JSONByteBuffer.copy(line.baseAddress!, to: to + at, count: line.count)
      at += line.count
      to[at] = UInt8(ascii: "\"")
      JSONByteBuffer.copy(name.baseAddress!, to: to + at + 1, count: name.count)
      at += 1 + name.count
      // `": `, the end of every key.
      to[at] = UInt8(ascii: "\"")
      to[at + 1] = UInt8(ascii: ":")
      to[at + 2] = UInt8(ascii: " ")
      return at + 3
    }
  }

  mutating func key(named name: String) {
    nextEntry()
    out.append(UInt8(ascii: "\""))
    Escaping.jsonContents(name, into: &out)
    JSONValue.append(Self.endOfKey, to: &out)
    afterKey = true
  }

  /// What follows a key's name: its closing quote, the colon and a space.
  private static let endOfKey: StaticString = "\": "

  mutating func null() {
    beginValue()
    JSONValue.append("null", to: &out)
  }

  mutating func bool(_ value: Bool) {
    beginValue()
    JSONValue.append(value ? "true" : "false", to: &out)
  }

  mutating func int(_ value: Int64) {
    beginValue()
    Escaping.appendDecimal(value, to: &out)
  }

  mutating func double(_ value: Double) { self.value(.double(value)) }

  mutating func string(_ value: String) {
    beginValue()
    Escaping.json(value, into: &out)
  }

  mutating func value(_ value: JSONValue) {
    beginValue()
    value.write(to: &out, pretty: true, indent: depth)
  }

  mutating func hex(_ value: UInt64) {
    beginValue()
    out.append(UInt8(ascii: "\""))
    Escaping.appendHex(value, to: &out)
    out.append(UInt8(ascii: "\""))
  }

  /// Writes each shared array once per depth, then copies those bytes: a leak-heavy report
  /// prints the same few hundred stacks in hundreds of groups, and the copy costs a fraction
  /// of escaping and indenting each frame again. The trade-off is memory for one copy of
  /// each distinct array's text, and holding the arrays until the writer goes.
  mutating func array<Element>(
    shared elements: [Element], _ element: (inout Self, Element) -> Void
  ) {
    // The storage's address names the array: a value type's storage never changes while
    // it is shared, and pinning it keeps the address from being reused.
    guard elements.count > 1, let storage = elements.withUnsafeBufferPointer({ $0.baseAddress })
    else { return array(elements, element) }
    beginValue()
    let key = SharedArray(storage: UnsafeRawPointer(storage), depth: depth)
    if let range = sharedArrays[key] {
      repeatedBytes.withUnsafeBufferPointer {
        out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[range]))
      }
      return
    }
    let start = out.count
    open(UInt8(ascii: "["))
    for item in elements { element(&self, item) }
    endArray()
    let first = repeatedBytes.count
    out.withUnsafeBytes {
      repeatedBytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start...]))
    }
    sharedArrays[key] = first..<repeatedBytes.count
    pinned.append(elements)
  }
}

/// A ``JSONValue`` tree.
struct JSONTreeBuilder: JSONOutput {
  private enum Open {
    case object([(String, JSONValue)], key: String?)
    case array([JSONValue])
  }

  private var open: [Open] = []
  /// The document, once its outermost value is complete.
  private(set) var value: JSONValue = .null

  init() {}

  private mutating func add(_ value: JSONValue) {
    guard let last = open.popLast() else {
      self.value = value
      return
    }
    switch last {
    case .object(var members, let key):
      members.append((key ?? "", value))
      open.append(.object(members, key: nil))
    case .array(var elements):
      elements.append(value)
      open.append(.array(elements))
    }
  }

  mutating func beginObject() { open.append(.object([], key: nil)) }

  mutating func endObject() {
    guard case .object(let members, _) = open.popLast() else { return }
    add(.object(members))
  }

  mutating func beginArray() { open.append(.array([])) }

  mutating func endArray() {
    guard case .array(let elements) = open.popLast() else { return }
    add(.array(elements))
  }

  mutating func key(_ name: StaticString) { key(named: name.description) }

  mutating func key(named name: String) {
    guard case .object(let members, _) = open.popLast() else { return }
    open.append(.object(members, key: name))
  }

  mutating func null() { add(.null) }
  mutating func bool(_ value: Bool) { add(.bool(value)) }
  mutating func int(_ value: Int64) { add(.int(value)) }
  mutating func double(_ value: Double) { add(.double(value)) }
  mutating func string(_ value: String) { add(.string(value)) }
  mutating func hex(_ value: UInt64) { add(.string(Address(value).description)) }
  mutating func value(_ value: JSONValue) { add(value) }

  mutating func array<Element>(
    shared elements: [Element], _ element: (inout Self, Element) -> Void
  ) {
    array(elements, element)
  }
}
