#if canImport(Glibc)
  import Glibc
#endif

/// Reads an input's lines in large chunks with `read(2)`, handing out each line's bytes
/// without copying.
///
/// Why not Foundation: `FileHandle` and `String(contentsOf:)` either load the whole file or
/// copy per line. The buffer is reused; memory is bounded by the longest line, and lines
/// longer than ``maximumLineLength`` are skipped (reported as too long) so that a garbage
/// file without newlines cannot make the reader allocate its size.
///
/// Newlines are found with `memchr`, which glibc implements with AVX2 (32 bytes a step, with
/// an SSE2 fallback): a `SIMD16<UInt8>` loop in Swift does half the bytes per step. The time
/// of a report is in parsing and analysis, not here (about 1 % in the profiles of issue 11).
final class LineSource {
  static let chunkSize = 1 << 20
  static let maximumLineLength = 64 << 20

  private let fd: Int32
  private let name: String
  private let ownsDescriptor: Bool
  // Unchecked: only the reading thread calls `next()`, and no access overlaps another; the
  // runtime's checks were two calls per line.
  @exclusivity(unchecked) private var buffer: UnsafeMutablePointer<UInt8>
  @exclusivity(unchecked) private var capacity: Int
  @exclusivity(unchecked) private var start = 0
  @exclusivity(unchecked) private var filled = 0
  @exclusivity(unchecked) private var atEOF = false
  @exclusivity(unchecked) private(set) var bytesRead = 0

  /// One line handed out by ``next()``.
  enum Line {
    /// A complete line, without its `\n`.
    case complete(UnsafeBufferPointer<UInt8>)
    /// The input's last bytes, with no `\n` after them.
    case unterminated(UnsafeBufferPointer<UInt8>)
    /// A line longer than the limit; its bytes were dropped.
    case tooLong
  }

  /// Opens `input`.
  init(_ input: LogInput) throws(AnalysisError) {
    name = input.displayName
    if let path = input.path {
      let descriptor = open(path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        let code = errno
        if code == ENOENT { throw .inputNotFound(path: path) }
        throw .inputUnreadable(path: path, reason: String(cString: strerror(code)))
      }
      fd = descriptor
      ownsDescriptor = true
    } else {
      fd = 0
      ownsDescriptor = false
    }
    capacity = Self.chunkSize
    buffer = .allocate(capacity: capacity)
  }

  deinit {
    buffer.deallocate()
    if ownsDescriptor { close(fd) }
  }

  /// The next line, or `nil` at the end of the input. The bytes are valid until the next call.
  func next() throws(AnalysisError) -> Line? {
    var searchFrom = start
    var skippingLongLine = false
    while true {
      if filled > searchFrom,
        let newline = memchr(buffer + searchFrom, 0x0A, filled - searchFrom)
      {
        let end = buffer.distance(to: newline.assumingMemoryBound(to: UInt8.self))
        let lineStart = start
        start = end + 1
        if skippingLongLine { return .tooLong }
        return .complete(UnsafeBufferPointer(start: buffer + lineStart, count: end - lineStart))
      }
      searchFrom = filled
      if atEOF {
        guard filled > start else { return nil }
        let lineStart = start
        start = filled
        if skippingLongLine { return .tooLong }
        return .unterminated(
          UnsafeBufferPointer(start: buffer + lineStart, count: filled - lineStart))
      }
      // Make room: move the partial line to the front, or grow when it fills the buffer.
      if start > 0 {
        let pending = filled - start
        if pending > 0 { memmove(buffer, buffer + start, pending) }
        searchFrom -= start
        filled = pending
        start = 0
      }
      if filled == capacity {
        if capacity >= Self.maximumLineLength {
          skippingLongLine = true
          filled = 0
          searchFrom = 0
        } else {
          let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
          bigger.update(from: buffer, count: filled)
          buffer.deallocate()
          buffer = bigger
          capacity *= 2
        }
      }
      let count = read(fd, buffer + filled, capacity - filled)
      if count < 0 {
        if errno == EINTR { continue }
        throw .inputUnreadable(path: name, reason: String(cString: strerror(errno)))
      }
      if count == 0 {
        atEOF = true
      } else {
        filled += count
        bytesRead += count
      }
    }
  }
}
