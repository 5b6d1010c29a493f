/// Compact JSON (no whitespace) written straight into bytes: the one writer of the
/// recorder's log lines, the holder scan's record and the Perfetto export. The reports'
/// pretty JSON has a writer of its own (`DeallocAnalysis/Support/JSONOutput.swift`).
///
/// Why bytes and not `String` or a tree: the recorder formats thousands of records per
/// flush and the exporter an event or two per log record, so per-value arrays,
/// dictionaries and string growth would dominate their time. Strings are escaped by
/// ``Escaping/json(_:into:)`` (every byte of input, by the one JSON policy), integers and
/// hex by ``Escaping/appendDecimal(_:to:)`` and ``Escaping/appendHex(_:to:)``, so a name or
/// an address reads the same in the log, a trace and a report. The one exception: the names
/// in a `holders` record's value go through the C writers' escaper instead
/// (`DeallocTrace/HoldersValue.swift`), so that they read as the census's do. Keys are the
/// writers' own ASCII names, copied unescaped.
///
/// The writer places the commas; the caller places the values: after ``key(_:)`` (or a
/// `field`) comes exactly one value, and each value of an array follows ``element()``.
/// Everything is `@inlinable`, so that the recorder's writer thread gets it specialized
/// in its own module, as if written there.
public struct CompactJSON {
  public var bytes: [UInt8] = []
  /// Whether the next key or element needs a comma before it.
  @usableFromInline var needsComma = false

  @inlinable
  public init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  // MARK: Structure

  @inlinable
  public mutating func beginObject() {
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  @inlinable
  public mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  @inlinable
  public mutating func beginArray() {
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  @inlinable
  public mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Starts the next value of an array.
  @inlinable
  public mutating func element() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
    needsComma = true
  }

  /// Starts a member: `"name":`, its value to follow.
  @inlinable
  public mutating func key(_ name: StaticString) {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
    needsComma = true
    bytes.append(UInt8(ascii: "\""))
    name.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  /// An object as the value of the current key or element; `body` writes its members.
  @inlinable
  public mutating func object(_ body: (inout CompactJSON) -> Void) {
    beginObject()
    body(&self)
    endObject()
  }

  /// Bytes the caller spells itself (a document's frame, a line's end), as they are.
  @inlinable
  public mutating func raw(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  /// Forgets the commas' state: the next key or element is the first of its object.
  @inlinable
  public mutating func resetCommas(needed: Bool = false) {
    needsComma = needed
  }

  // MARK: Values

  /// A JSON string, escaped.
  @inlinable
  public mutating func string(_ value: String) {
    Escaping.json(value, into: &bytes)
  }

  /// A string the writer spells itself: copied between quotes, unescaped.
  @inlinable
  public mutating func string(literal value: StaticString) {
    bytes.append(UInt8(ascii: "\""))
    value.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
  }

  /// One string of two parts (`"late dealloc: " + type`), without concatenating them.
  @inlinable
  public mutating func string(prefix: StaticString, _ value: String) {
    bytes.append(UInt8(ascii: "\""))
    prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
    Escaping.jsonContents(value, into: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  @inlinable
  public mutating func integer(_ value: some BinaryInteger) {
    Escaping.appendDecimal(value, to: &bytes)
  }

  @inlinable
  public mutating func bool(_ value: Bool) {
    if value { raw("true") } else { raw("false") }
  }

  /// `"0x…"` in lower-case hex, as the log writes addresses.
  @inlinable
  public mutating func hex(_ value: UInt64) {
    bytes.append(UInt8(ascii: "\""))
    Escaping.appendHex(value, to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  // MARK: Members

  @inlinable
  public mutating func field(_ key: StaticString, _ value: String) {
    self.key(key)
    string(value)
  }

  @inlinable
  public mutating func field(_ key: StaticString, _ value: StaticString) {
    self.key(key)
    string(literal: value)
  }

  @inlinable
  public mutating func field(_ key: StaticString, _ value: some BinaryInteger) {
    self.key(key)
    integer(value)
  }

  @inlinable
  public mutating func field(_ key: StaticString, _ value: Bool) {
    self.key(key)
    bool(value)
  }

  @inlinable
  public mutating func field(_ key: StaticString, hex value: UInt) {
    self.key(key)
    hex(UInt64(value))
  }
}
