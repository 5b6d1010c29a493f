#if canImport(Glibc)
  import Glibc
#endif

/// Turns repeated byte strings (type names, queue names, module paths) into one shared
/// `String` each, without allocating when the string was seen before, with its ``NameID``:
/// the index of its entry, so dense and in order of first appearance.
///
/// Why: a log repeats a handful of type and queue names millions of times; decoding each
/// into a fresh `String` would dominate the reader's time. The trade-off is memory bounded
/// by ``capacity`` distinct strings; past it, strings are decoded without interning, so a
/// log full of unique labels costs time, never unbounded memory (and its strings past the
/// capacity have no ``NameID``, which consumers of ids must allow for).
///
/// The input chooses the strings, so the table's hash is seeded per process (names made to
/// collide under one seed spread under another) and a lookup looks at no more than
/// ``maximumProbes`` slots: a string it cannot place within them is decoded without
/// interning. The cost of a lookup is bounded whatever the names; the price is one random
/// word per process and, for an unlucky string, a `String` of its own.
struct StringInterner {
  static let capacity = NameID.count
  /// Slots a lookup looks at before it gives up on the table (a well spread table at most
  /// half full needs one or two).
  static let maximumProbes = 32
  /// The process's seed: drawn once, from the system's random source.
  private static let processSeed = UInt64.random(in: .min ... .max)
  private let seed = StringInterner.processSeed

  private var slots: [Int32]  // entry index + 1, 0 when empty
  private var hashes: [UInt64] = []
  private var offsets: [Int] = []
  private var storage: [UInt8] = []
  private(set) var strings: [String] = []
  /// Strings of 1 to 16 bytes seen lately, by ``ShortKey``: direct-mapped, the newest wins.
  private var shortKeys = [ShortKey](repeating: ShortKey(), count: shortSlots)
  private var shortStrings = [String](repeating: "", count: shortSlots)
  private var shortIDs = [NameID](repeating: .none, count: shortSlots)
  private static let shortSlots = 256
  /// Table slots looked at so far, for tests: a lookup's cost.
  private(set) var probes = 0

  init() {
    slots = Array(repeating: 0, count: 1024)
  }

  /// The shared string for `count` bytes at `pointer` (UTF-8; invalid bytes become U+FFFD).
  ///
  /// A string of up to 16 bytes (a type or queue name, nearly always) is first looked up by
  /// its bytes read as two words, which takes no hash loop, no probe and no `memcmp`: under
  /// half the cost of the table below, for the two names of every enqueue.
  mutating func intern(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> (
    string: String, id: NameID
  ) {
    guard let key = ShortKey(pointer, count) else { return internInTable(pointer, count) }
    let slot = key.slot(Self.shortSlots)
    if shortKeys[slot] == key { return (shortStrings[slot], shortIDs[slot]) }
    let interned = internInTable(pointer, count)
    shortKeys[slot] = key
    shortStrings[slot] = interned.string
    shortIDs[slot] = interned.id
    return interned
  }

  /// `string`'s shared string and id: for a name decoded from escapes, so that it gets the
  /// id of its plain form.
  mutating func intern(_ string: String) -> (string: String, id: NameID) {
    var string = string
    return string.withUTF8 { bytes in
      intern(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!, bytes.count)
    }
  }

  private mutating func internInTable(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> (
    string: String, id: NameID
  ) {
    // Eight bytes per multiply: type and queue names are hashed at every short-key miss.
    let hash = WordMix.bytes(pointer, count, seed: seed)
    let mask = slots.count - 1
    var slot = Self.home(hash, slots.count)
    var looked = 0
    while true {
      probes += 1
      let entry = Int(slots[slot])
      if entry == 0 { break }
      let e = entry - 1
      if hashes[e] == hash && offsets[e + 1] - offsets[e] == count {
        let same = storage.withUnsafeBufferPointer { buffer in
          memcmp(buffer.baseAddress! + offsets[e], pointer, count) == 0
        }
        if same { return (strings[e], NameID(e)) }
      }
      looked += 1
      if looked == Self.maximumProbes {
        let string = String(
          decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
        return (string, .none)
      }
      slot = (slot + 1) & mask
    }
    let string = String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    guard strings.count < Self.capacity else { return (string, .none) }
    let id = NameID(strings.count)
    if offsets.isEmpty { offsets.append(0) }
    storage.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
    offsets.append(storage.count)
    hashes.append(hash)
    strings.append(string)
    slots[slot] = Int32(strings.count)
    if strings.count * 2 > slots.count { grow() }
    return (string, id)
  }

  /// A hash's first slot in a table of `slots` (a power of two): its top bits, which every
  /// byte of the text reaches (the low bits of the last multiply depend on low bits only).
  @inline(__always)
  private static func home(_ hash: UInt64, _ slots: Int) -> Int {
    Int(truncatingIfNeeded: hash >> UInt64(64 - slots.trailingZeroBitCount))
  }

  private mutating func grow() {
    var bigger = [Int32](repeating: 0, count: slots.count * 2)
    let mask = bigger.count - 1
    for e in 0..<strings.count {
      var slot = Self.home(hashes[e], bigger.count)
      while bigger[slot] != 0 { slot = (slot + 1) & mask }
      bigger[slot] = Int32(e + 1)
    }
    slots = bigger
  }
}

/// All the bytes of a string of 1 to 16 bytes, as two words and the count: equal keys are
/// equal bytes. The words overlap for fewer than 16 bytes (the first and the last eight, or
/// four), and only bytes of the string are read.
private struct ShortKey: Equatable {
  var first: UInt64 = 0
  var last: UInt64 = 0
  var count = 0

  init() {}

  @inline(__always)
  init?(_ pointer: UnsafePointer<UInt8>, _ count: Int) {
    guard count > 0 && count <= 16 else { return nil }
    let raw = UnsafeRawPointer(pointer)
    if count >= 8 {
      first = raw.loadUnaligned(as: UInt64.self)
      last = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    } else if count >= 4 {
      first = UInt64(raw.loadUnaligned(as: UInt32.self))
      last = UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
    } else {
      first =
        UInt64(pointer[0]) | UInt64(pointer[count / 2]) << 8 | UInt64(pointer[count - 1]) << 16
    }
    self.count = count
  }

  /// One of `slots` (a power of two), from the product's top bits: only they depend on
  /// every bit of both words (names often differ in their last byte alone).
  @inline(__always)
  func slot(_ slots: Int) -> Int {
    let mixed = WordMix.pair(first ^ UInt64(count), last)
    return Int(truncatingIfNeeded: mixed >> UInt64(64 - slots.trailingZeroBitCount))
  }
}
