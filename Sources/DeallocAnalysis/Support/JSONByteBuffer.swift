import TextEscaping

/// The bytes a ``JSONByteWriter`` appends to: an array's growth and value semantics, with an
/// append that costs a capacity check, a uniqueness check and the copy.
///
/// Why not `[UInt8]`: its `append(contentsOf:)` cost about a hundred instructions a call,
/// and a pretty report appends a few short runs per member (an indentation, a key, a
/// value), which made the calls most of the time spent rendering. The trade-off is one more
/// copy of the document at the end, as an array.
struct JSONByteBuffer: ByteSink {
  /// Memory this buffer owns; replaced, not resized, to grow or to stop sharing it.
  private final class Storage {
    let start: UnsafeMutablePointer<UInt8>
    let capacity: Int

    init(capacity: Int) {
      self.capacity = capacity
      start = .allocate(capacity: capacity)
    }

    deinit { start.deallocate() }
  }

  private var storage: Storage
  /// The longest run copied byte by byte.
  private static let shortRun = 16
  /// How many bytes have been appended.
  private(set) var count = 0

  init(capacity: Int = 0) {
    storage = Storage(capacity: max(capacity, 64))
  }

  /// The bytes appended so far.
  var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    body(UnsafeBufferPointer(start: storage.start, count: count))
  }

  @inline(__always)
  mutating func append(_ byte: UInt8) {
    reserve(1)
    (storage.start + count).initialize(to: byte)
    count += 1
  }

  @inline(__always)
  mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
    guard let from = bytes.baseAddress else { return }
    let length = bytes.count
    reserve(length)
    let to = storage.start + count
    // Most runs are a few bytes (a quote, a key, an indentation): a call to `memmove` costs
    // more than copying them.
    if length <= Self.shortRun {
      for index in 0..<length { (to + index).initialize(to: from[index]) }
    } else {
      to.initialize(from: from, count: length)
    }
    count += length
  }

  /// Room for `extra` more bytes in storage of this buffer's own.
  @inline(__always)
  private mutating func reserve(_ extra: Int) {
    if count + extra > storage.capacity || !isKnownUniquelyReferenced(&storage) {
      replaceStorage(toHold: count + extra)
    }
  }

  @inline(never)
  private mutating func replaceStorage(toHold needed: Int) {
    let grown = Storage(capacity: max(needed, storage.capacity * 2))
    grown.start.initialize(from: storage.start, count: count)
    storage = grown
  }
}
