import Synchronization
import TextEscaping

#if canImport(Glibc)
  import Glibc
#endif

/// The bytes a ``JSONByteWriter`` appends to: an array's growth and value semantics, with an
/// append that costs a capacity check, a uniqueness check and the copy.
///
/// Why not `[UInt8]`: its `append(contentsOf:)` cost about a hundred instructions a call,
/// and a pretty report appends a few short runs per member (an indentation, a key, a
/// value), which made the calls most of the time spent rendering. The document is lent out
/// where it lies (``withUnsafeBytes(_:)``), not copied into an array.
struct JSONByteBuffer: ByteSink {
  /// Memory this buffer owns: grown in place with `realloc` while it is not shared (glibc
  /// remaps a large buffer's pages instead of copying them and touching new ones, which were
  /// a third of rendering a 4 MB report), replaced to stop sharing it.
  private final class Storage {
    private(set) var start: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int

    init(capacity: Int) {
      self.capacity = capacity
      guard let memory = malloc(capacity) else { fatalError("out of memory") }
      start = memory.assumingMemoryBound(to: UInt8.self)
    }

    /// Room for at least `needed` bytes, the first ones kept.
    func grow(toHold needed: Int) {
      let grown = max(needed, capacity * 2)
      guard let memory = realloc(start, grown) else { fatalError("out of memory") }
      start = memory.assumingMemoryBound(to: UInt8.self)
      capacity = grown
    }

    deinit { free(start) }
  }

  private var storage: Storage
  /// Copies made to stop sharing storage, counted where a test sets a counter: what shows
  /// that a path lends its bytes without one (a JSON report's second half was once copied,
  /// 2 MB into fresh pages, by an unwrapped copy of the writer). Read only on that rare path.
  @TaskLocal static var unsharingCopies: CopyCount?

  final class CopyCount: Sendable {
    let count = Atomic(0)
  }

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
    Self.copy(from, to: storage.start + count, count: length)
    count += length
  }

  /// Appends what `write` writes at the pointer it is handed, at most `maximum` bytes, and
  /// returns: one capacity and uniqueness check for a run of pieces (a key's line: its
  /// separator, indentation, name and colon) instead of one per piece.
  @inline(__always)
  mutating func append(maximum: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Int) {
    reserve(maximum)
    let written = write(storage.start + count)
    assert(written <= maximum)
    count += written
  }

  /// Copies `count` bytes that do not overlap `to`. Most runs are a few bytes (a quote, a
  /// key, an indentation, a short name), where a call to `memmove` costs more than the copy:
  /// up to ``shortRun`` bytes move as two words (or two half words) that overlap in the
  /// middle, which reads and writes only the run's own bytes, with no loop.
  @inline(__always)
  static func copy(_ from: UnsafePointer<UInt8>, to: UnsafeMutablePointer<UInt8>, count: Int) {
    let source = UnsafeRawPointer(from)
    let target = UnsafeMutableRawPointer(to)
    switch count {
    case 8...shortRun:
      let head = source.loadUnaligned(as: UInt64.self)
      let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
      target.storeBytes(of: head, as: UInt64.self)
      target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
    case 4..<8:
      let head = source.loadUnaligned(as: UInt32.self)
      let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
      target.storeBytes(of: head, as: UInt32.self)
      target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
    case 0..<4:
      for index in 0..<count { to[index] = from[index] }
    default:
      to.update(from: from, count: count)
    }
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
    if isKnownUniquelyReferenced(&storage) {
      storage.grow(toHold: needed)
      return
    }
    Self.unsharingCopies?.count.add(1, ordering: .relaxed)
    let copy = Storage(capacity: max(needed, storage.capacity))
    copy.start.initialize(from: storage.start, count: count)
    storage = copy
  }
}
