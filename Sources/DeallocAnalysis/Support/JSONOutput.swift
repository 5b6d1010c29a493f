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
  /// The name of the next member of the object being written.
  mutating func key(_ name: String)
  mutating func null()
  mutating func bool(_ value: Bool)
  mutating func int(_ value: Int64)
  mutating func double(_ value: Double)
  mutating func string(_ value: String)
  /// `value` as a string of lower-case hex with the `0x` prefix, as the log writes addresses.
  mutating func hex(_ value: UInt64)
  /// A value built elsewhere as a tree.
  mutating func value(_ value: JSONValue)
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
  mutating func field(_ key: String, _ value: String?) {
    self.key(key)
    string(value)
  }

  /// `key` and an integer (or `null`).
  mutating func field(_ key: String, _ value: Int64?) {
    self.key(key)
    int(value)
  }

  /// `key` and an integer (or `null`).
  mutating func field(_ key: String, _ value: Int?) {
    self.key(key)
    int(value)
  }

  /// `key` and an address-style hex string (or `null`).
  mutating func hexField(_ key: String, _ value: UInt64?) {
    self.key(key)
    if let value { hex(value) } else { null() }
  }

  mutating func field(_ key: String, _ value: Bool) {
    self.key(key)
    bool(value)
  }

  /// `key`, then whatever `value` writes.
  mutating func field(_ key: String, _ value: (inout Self) -> Void) {
    self.key(key)
    value(&self)
  }
}

/// Pretty-printed JSON bytes, two spaces per level, as ``JSONValue/serialized(pretty:)``.
struct JSONByteWriter: JSONOutput {
  private(set) var bytes: [UInt8] = []
  /// Members or elements written so far in each open container, outermost first.
  private var counts: [Int] = []
  /// A key was just written: the next value follows it on its line.
  private var afterKey = false

  init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  /// The separator and indentation before a value in an array (a member's came with its key).
  private mutating func beginValue() {
    if afterKey {
      afterKey = false
      return
    }
    nextEntry()
  }

  private mutating func nextEntry() {
    guard let last = counts.indices.last else { return }
    if counts[last] > 0 { bytes.append(UInt8(ascii: ",")) }
    counts[last] += 1
    JSONValue.newline(&bytes, counts.count)
  }

  mutating func beginObject() {
    beginValue()
    bytes.append(UInt8(ascii: "{"))
    counts.append(0)
  }

  mutating func endObject() { close(UInt8(ascii: "}")) }

  mutating func beginArray() {
    beginValue()
    bytes.append(UInt8(ascii: "["))
    counts.append(0)
  }

  mutating func endArray() { close(UInt8(ascii: "]")) }

  private mutating func close(_ bracket: UInt8) {
    if counts.removeLast() > 0 { JSONValue.newline(&bytes, counts.count) }
    bytes.append(bracket)
  }

  mutating func key(_ name: String) {
    nextEntry()
    Escaping.json(name, into: &bytes)
    bytes.append(UInt8(ascii: ":"))
    bytes.append(UInt8(ascii: " "))
    afterKey = true
  }

  mutating func null() { value(.null) }
  mutating func bool(_ value: Bool) { self.value(.bool(value)) }
  mutating func int(_ value: Int64) { self.value(.int(value)) }
  mutating func double(_ value: Double) { self.value(.double(value)) }

  mutating func string(_ value: String) {
    beginValue()
    Escaping.json(value, into: &bytes)
  }

  mutating func value(_ value: JSONValue) {
    beginValue()
    value.write(to: &bytes, pretty: true, indent: counts.count)
  }

  mutating func hex(_ value: UInt64) {
    beginValue()
    bytes.append(UInt8(ascii: "\""))
    Escaping.appendHex(value, to: &bytes)
    bytes.append(UInt8(ascii: "\""))
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

  mutating func key(_ name: String) {
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
}
